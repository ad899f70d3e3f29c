package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// parseCommand parses a command's flags (in and output are bound to fl) and checks what every
// command needs: no stray argument, at least one -f, an -o among formats (table or json when
// none are given). It returns the exit code when the command must stop there (help, or a bad
// command line), and false to go on.
func parseCommand(name string, fl *flag.FlagSet, args []string, in *files, output *string, stderr io.Writer, formats ...string) (int, bool) {
	if len(formats) == 0 {
		formats = []string{"table", "json"}
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, true
		}
		return ExitUsage, true
	}
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "strata %s: unexpected argument %q (files go after -f)\n", name, fl.Arg(0))
		return ExitUsage, true
	case len(*in) == 0:
		fmt.Fprintf(stderr, "strata %s: -f FILE is required\n", name)
		return ExitUsage, true
	case !slices.Contains(formats, *output):
		fmt.Fprintf(stderr, "strata %s: -o must be %s, not %q\n", name, strings.Join(formats, " or "), *output)
		return ExitUsage, true
	}
	return 0, false
}

// printJSON writes v as indented JSON and a newline: the whole of a command's -o json output.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// noteTo returns the note function load is given: a line on stderr per object skipped, after
// the command's name, so that a note never mixes with the output on stdout.
func noteTo(stderr io.Writer, name string) func(string) {
	return func(msg string) { fmt.Fprintf(stderr, "strata %s: note: %s\n", name, msg) }
}

// inputHelp is the part of every command's help about what its -f files may hold.
const inputHelp = `The files may hold more than Strata's objects: a v1 List (what 'kubectl get -o yaml'
writes) counts as its items, and objects of other kinds (a Namespace, a ConfigMap) are skipped
with a note on stderr. An unknown kind or version in the strata.dev group is an error.
`
