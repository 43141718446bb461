package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/wagerail/wagerail/internal/platform/buildinfo"
	"github.com/wagerail/wagerail/internal/platform/cli"
)

func versionCommand() *cli.Command {
	c := cli.New("version", "wagerail version", "Print the version, commit and Go version.")
	c.Run = func(context.Context, []string) error {
		fmt.Printf("wagerail %s (commit %s, %s)\n", buildinfo.Version, buildinfo.Commit(), runtime.Version())
		return nil
	}
	return c
}
