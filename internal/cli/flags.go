package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseCommand parses a command's flags (in and output are bound to fl) and checks what every
// command needs: no stray argument, at least one -f, an -o of table or json. It returns the exit
// code when the command must stop there (help, or a bad command line), and false to go on.
func parseCommand(name string, fl *flag.FlagSet, args []string, in *files, output *string, stderr io.Writer) (int, bool) {
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
	case *output != "table" && *output != "json":
		fmt.Fprintf(stderr, "strata %s: -o must be table or json, not %q\n", name, *output)
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
