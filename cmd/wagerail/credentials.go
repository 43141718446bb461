package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// The data dir's credentials file is written by `wagerail dev` and read by every subcommand run
// beside it (resolveDatabaseURL), so it is part of every build, the noembed one included.

// credentialsFile is the data dir's credentials file.
const credentialsFile = "credentials.json"

// devCredentials are the passwords of the private cluster's login roles, made on first run and
// kept (0600) beside it so a second run reuses the same cluster; and the demo's.
type devCredentials struct {
	OwnerPassword    string `json:"ownerPassword"`
	AppPassword      string `json:"appPassword"`
	PlatformPassword string `json:"platformPassword"` // the cross-tenant role (internal/platform/crosstenant)
	CallbackSecret   string `json:"callbackSecret"`   // sandbox → API webhook signing key
	AdjustmentKey    string `json:"adjustmentKey"`    // API → ledger adjustment approval key
	// TemporalPassword is the password of the embedded Temporal server's login role
	// (devtemporal.PostgresUser) when its state is in the private cluster (--temporal-postgres).
	TemporalPassword string `json:"temporalPassword"`
	// Demo holds the demo's generated passwords and ids (demo.go); nil until it was seeded.
	Demo *demoCredentials `json:"demo,omitempty"`
}

func loadOrCreateCredentials(path string) (devCredentials, error) {
	var c devCredentials
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &c); err != nil || c.OwnerPassword == "" || c.AppPassword == "" {
			return c, fmt.Errorf("%s is damaged: delete the data dir to start afresh", path)
		}
		if c.CallbackSecret != "" && c.AdjustmentKey != "" && c.PlatformPassword != "" && c.TemporalPassword != "" {
			return c, nil
		}
		// Written by an older version: add the missing keys, keep the passwords.
		if c.CallbackSecret == "" {
			c.CallbackSecret = randomToken()
		}
		if c.AdjustmentKey == "" {
			c.AdjustmentKey = randomToken()
		}
		if c.PlatformPassword == "" {
			c.PlatformPassword = randomToken()
		}
		if c.TemporalPassword == "" {
			c.TemporalPassword = randomToken()
		}
		b, _ = json.Marshal(c)
		return c, os.WriteFile(path, b, 0o600)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	c = devCredentials{OwnerPassword: randomToken(), AppPassword: randomToken(), PlatformPassword: randomToken(),
		CallbackSecret: randomToken(), AdjustmentKey: randomToken(), TemporalPassword: randomToken()}
	b, _ = json.Marshal(c)
	return c, os.WriteFile(path, b, 0o600)
}

func randomToken() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// demoCredentials is the demo's part of credentials.json: generated passwords, the ids the seed
// made, and how far it got.
type demoCredentials struct {
	AdminEmail     string            `json:"adminEmail"`
	AdminPassword  string            `json:"adminPassword"`
	OwnerEmail     string            `json:"ownerEmail"`
	OwnerPassword  string            `json:"ownerPassword"`
	BusinessID     string            `json:"businessId,omitempty"`
	Employees      map[string]string `json:"employees,omitempty"` // demoEmployee.Key → employee id
	FundingAccount string            `json:"fundingAccount"`
	// EwaSettingsSet and Complete record the steps a re-run cannot see without acting (the
	// settings have defaults; reading them needs a session, which is audited).
	EwaSettingsSet bool `json:"ewaSettingsSet,omitempty"`
	Complete       bool `json:"complete,omitempty"`
	// The lending part (demo_lending.go): the FI's owner, its id, its product, and whether the
	// part is complete (a data dir seeded before lending existed gets it on its next run).
	LenderEmail     string `json:"lenderEmail,omitempty"`
	LenderPassword  string `json:"lenderPassword,omitempty"`
	FIID            string `json:"fiId,omitempty"`
	LoanProductID   string `json:"loanProductId,omitempty"`
	LendingComplete bool   `json:"lendingComplete,omitempty"`
	// The payroll part (demo_payroll.go): the business's second admin, who approves runs.
	ApproverEmail    string `json:"approverEmail,omitempty"`
	ApproverPassword string `json:"approverPassword,omitempty"`
	PayrollComplete  bool   `json:"payrollComplete,omitempty"`
	// The employee part (demo_employee.go): Almaz's own login.
	EmployeeEmail         string `json:"employeeEmail,omitempty"`
	EmployeePassword      string `json:"employeePassword,omitempty"`
	EmployeeLoginComplete bool   `json:"employeeLoginComplete,omitempty"`
}
