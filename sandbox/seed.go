package sandbox

import (
	"context"
	"errors"
	"fmt"
)

// DemoAccounts are the accounts `wagerail dev` opens so the demo flows (payroll, EWA, loans, equb)
// have somewhere to move money. Balances are opening balances in santim.
var DemoAccounts = []CreateAccountRequest{
	{AccountNumber: "1000000000001", HolderName: "Abay Textiles PLC Payroll", BalanceSantim: 2_500_000_000_00},
	{AccountNumber: "1000000000101", HolderName: "Almaz Tesfaye", BalanceSantim: 1_250_00},
	{AccountNumber: "1000000000102", HolderName: "Dawit Bekele", BalanceSantim: 430_50},
	{AccountNumber: "1000000000103", HolderName: "Hirut Alemu", BalanceSantim: 0},
	{AccountNumber: "1000000000104", HolderName: "Yonas Girma", BalanceSantim: 9_800_00},
	{AccountNumber: "1000000000201", HolderName: "Wagerail Lending Pool", BalanceSantim: 1_000_000_000_00},
	{AccountNumber: "1000000000202", HolderName: "Tana Microfinance Settlement", BalanceSantim: 0},
	{AccountNumber: "1000000000301", HolderName: "Wagerail Equb Escrow", BalanceSantim: 0},
	{AccountNumber: "1000000000401", HolderName: "Wagerail EWA Float", BalanceSantim: 500_000_000_00},
}

// DemoIdentities are the national identities the registry knows in `wagerail dev`: the demo
// employees' (cmd/wagerail demoEmployees: the same national id, name and date of birth), so the
// demo's KYC submissions verify, and one revoked id to show a refusal.
var DemoIdentities = []CreateIdentityRequest{
	{NationalID: "DEMO0000101", FullName: "Almaz Tesfaye", DateOfBirth: "1994-03-12"},
	{NationalID: "DEMO0000102", FullName: "Dawit Bekele", DateOfBirth: "1990-11-02"},
	{NationalID: "DEMO0000103", FullName: "Hirut Alemu", DateOfBirth: "1988-07-21"},
	{NationalID: "DEMO0000199", FullName: "Yonas Girma", DateOfBirth: "1985-01-30", Status: IdentityRevoked},
}

// SeedDemo opens the demo accounts that do not exist yet (an existing account is left as it is,
// so a restart never resets balances) and registers the demo identities. It returns how many
// accounts it opened.
func (b *Bank) SeedDemo(ctx context.Context) (int, error) {
	for _, id := range DemoIdentities {
		// A register that already holds the id with other content (an operator changed it) is
		// left as it is.
		var e *Error
		if _, _, err := b.identities.create(ctx, id); err != nil && !(errors.As(err, &e) && e.Code == CodeIdentityExists) {
			return 0, fmt.Errorf("sandbox.seed: %w", err)
		}
	}
	n := 0
	for _, a := range DemoAccounts {
		_, created, err := b.store.createAccount(ctx, a)
		if err != nil {
			return n, fmt.Errorf("sandbox.seed: %w", err)
		}
		if created {
			n++
		}
	}
	return n, nil
}
