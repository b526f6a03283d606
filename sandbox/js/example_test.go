package js_test

import (
	"context"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/js"
)

func ExampleRunner() {
	job := sandbox.Job{
		Code: `
			const rows = JSON.parse(inputs.result).rows;
			console.log(rows.length, "rows, total", rows.reduce((s, r) => s + r.n, 0));
			while (true) {}`,
		Inputs: []sandbox.Input{{Name: "result", Content: `{"rows": [{"n": 2}, {"n": 3}]}`}},
		Limits: sandbox.Limits{Wall: 100 * time.Millisecond},
	}
	res, err := js.Runner{}.Run(context.Background(), job)
	if err != nil {
		fmt.Println("runner failed:", err)
		return
	}
	fmt.Print(res.Stdout)
	fmt.Println(res.Stop, "-", res.Error)
	// Output:
	// 2 rows, total 5
	// wall - stopped: the script ran past its 100ms limit
}
