// Command wagerail is the one Wagerail binary: every process (API, worker, ledger, gateway,
// sandbox) is a subcommand, and `wagerail dev` runs them all in one process on embedded defaults.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wagerail/wagerail/internal/platform/cli"
)

// commands is every subcommand, in the order --help lists them.
func commands() []*cli.Command {
	return []*cli.Command{
		devCommand(),
		apiCommand(),
		workerCommand(),
		notifyCommand(),
		ledgerCommand(),
		gatewayCommand(),
		reconcileCommand(),
		adminCommand(),
		sanctionsCommand(),
		sandboxCommand(),
		migrateCommand(),
		versionCommand(),
	}
}

func main() {
	cmds := commands()
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage(cmds)
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	var cmd *cli.Command
	for _, c := range cmds {
		if c.Name == os.Args[1] {
			cmd = c
		}
	}
	if cmd == nil {
		cli.Fatal(fmt.Errorf("unknown command %q (run wagerail --help)", os.Args[1]))
	}
	if err := cmd.Parse(os.Args[2:], os.Stdout); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return
		}
		cli.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.Run(ctx, cmd.Args()); err != nil {
		stop()
		cli.Fatal(err)
	}
}

func usage(cmds []*cli.Command) {
	fmt.Println("Usage: wagerail <command> [flags]\n\nCommands:")
	for _, c := range cmds {
		fmt.Printf("  %-10s %s\n", c.Name, c.Summary)
	}
	fmt.Println("\nRun wagerail <command> --help for its flags and environment variables. In the directory of a")
	fmt.Println("running `make run`, a command given no database URL uses that private Postgres.")
}
