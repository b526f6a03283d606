package accounts

// DefaultExample is the example agent a new installation starts with
// (quiver serve's first start, through Bootstrap).
func DefaultExample() ExampleAgent {
	return ExampleAgent{Name: "assistant", Definition: []byte(defaultExample)}
}

// defaultExample is DefaultExample's agent file.
const defaultExample = `name: assistant
model: openai:gpt-4.1-mini
prompt: |
  You are a helpful assistant. Answer briefly and plainly.
  When numbers matter, compute them with {calculator_tool} instead of estimating.
tools: [web_search, fetch_url]
`
