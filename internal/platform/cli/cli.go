// Package cli binds a subcommand's flags to environment variables (flag beats environment beats
// default) and prints --help that lists every flag with its variable and default, so the same
// binary is configured the same way in a terminal, a compose file and a Kubernetes manifest.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Command is one `wagerail <name>` subcommand.
type Command struct {
	Name    string
	Usage   string // e.g. "wagerail migrate up|down N|version"
	Summary string
	Flags   *flag.FlagSet
	Run     func(ctx context.Context, args []string) error

	env   map[string]string
	order []string
	args  []string
}

// EnvVars lists the environment variables the command reads.
func (c *Command) EnvVars() []string {
	out := make([]string, 0, len(c.env))
	for _, name := range c.order {
		if e, ok := c.env[name]; ok {
			out = append(out, e)
		}
	}
	return out
}

// Args are the positional arguments left after Parse.
func (c *Command) Args() []string { return c.args }

// New makes a command with an empty flag set.
func New(name, usage, summary string) *Command {
	c := &Command{Name: name, Usage: usage, Summary: summary, Flags: flag.NewFlagSet(name, flag.ContinueOnError), env: map[string]string{}}
	c.Flags.SetOutput(io.Discard)
	return c
}

func (c *Command) bind(name, env string) {
	c.order = append(c.order, name)
	if env != "" {
		c.env[name] = env
	}
}

// String registers a string flag bound to env ("" for none).
func (c *Command) String(p *string, name, env, def, usage string) {
	c.Flags.StringVar(p, name, def, usage)
	c.bind(name, env)
}

// Int registers an int flag bound to env.
func (c *Command) Int(p *int, name, env string, def int, usage string) {
	c.Flags.IntVar(p, name, def, usage)
	c.bind(name, env)
}

// Bool registers a bool flag bound to env.
func (c *Command) Bool(p *bool, name, env string, def bool, usage string) {
	c.Flags.BoolVar(p, name, def, usage)
	c.bind(name, env)
}

// Duration registers a duration flag bound to env.
func (c *Command) Duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	c.Flags.DurationVar(p, name, def, usage)
	c.bind(name, env)
}

// ErrHelp is returned by Parse after printing help.
var ErrHelp = flag.ErrHelp

// Parse parses args, then fills every flag not given on the command line from its environment
// variable. A bad value names the flag or variable it came from.
func (c *Command) Parse(args []string, out io.Writer) error {
	// Flags may follow positional arguments (`migrate down 1 --component ledger`): parse, take one
	// positional, and parse again until nothing is left.
	var positional []string
	for {
		if err := c.Flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.PrintHelp(out)
				return ErrHelp
			}
			return fmt.Errorf("%s: %v (see wagerail %s --help)", c.Name, err, c.Name)
		}
		args = c.Flags.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			positional = append(positional, args[1:]...)
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	c.args = positional
	set := map[string]bool{}
	c.Flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range c.order {
		env, ok := c.env[name]
		if !ok || set[name] {
			continue
		}
		if v, ok := os.LookupEnv(env); ok && v != "" {
			if err := c.Flags.Set(name, v); err != nil {
				return fmt.Errorf("%s: environment %s=%q: %v", c.Name, env, v, err)
			}
		}
	}
	return nil
}

// PrintHelp writes usage, summary and the flag table.
func (c *Command) PrintHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", c.Usage, c.Summary)
	if len(c.order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  flag\tenvironment\tdefault\tmeaning")
	for _, name := range c.order {
		f := c.Flags.Lookup(name)
		def := f.DefValue
		if def == "" {
			def = `""`
		}
		env := c.env[name]
		if env == "" {
			env = "-"
		}
		fmt.Fprintf(tw, "  --%s\t%s\t%s\t%s\n", name, env, def, f.Usage)
	}
	tw.Flush()
}

// Fatal prints one line and exits non-zero: configuration errors say what to fix, nothing more.
func Fatal(err error) {
	// One line whatever the error carries (driver errors and SQL can span several).
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(os.Stderr, "wagerail: %s\n", msg)
	os.Exit(2)
}
