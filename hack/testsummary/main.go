package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	r := newReport(module("go.mod"))
	out := bufio.NewWriter(os.Stdout)
	err := r.Read(os.Stdin, flushing{out})
	failed := r.Summary(out)
	_ = out.Flush()
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	case failed:
		os.Exit(1)
	}
}

// module is the module path go.mod declares, or "" (then files are named by package path).
func module(gomod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	return ""
}

// flushing writes through the buffer at each write, so that progress shows as it happens.
type flushing struct{ w *bufio.Writer }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.w.Flush()
	}
	return n, err
}
