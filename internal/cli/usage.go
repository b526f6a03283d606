package cli

import "embed"

// usageFiles holds every command's --help text, one file per command
// (usage/NAME.txt), kept as text so that it reads as what a person sees.
//
//go:embed usage/*.txt
var usageFiles embed.FS

// usageText is usage/NAME.txt. Every text is read when the package is
// initialised, so a missing file fails every test of the package at once.
func usageText(name string) string {
	b, err := usageFiles.ReadFile("usage/" + name + ".txt")
	if err != nil {
		panic("internal/cli: no usage text " + name + ": " + err.Error())
	}
	return string(b)
}
