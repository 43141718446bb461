package main

import (
	"strconv"
	"testing"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func addr(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
