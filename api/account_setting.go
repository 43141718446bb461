package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// An organization setting that is one partner account (the wallet's pool account, GET/PUT
// /api/wallet/settings; the savings escrow account, GET/PUT /api/savings/settings) is read and
// set the same way: GET answers the stored account (every field null while unset); PUT requires
// the account, checks its shape, asks the partner whether it exists and is active
// (checkPartnerAccount) and stores it through the store, which audits it and writes its event.
// accountSetting says what differs; getAccountSetting and putAccountSetting are the handlers'
// bodies.

// partnerAccountJSON is the account of a one-account setting, in a request and an answer.
type partnerAccountJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
}

// accountSetting is one kind of one-account setting: S is the store's settings, J their answer.
type accountSetting[S, J any] struct {
	// Check names the account's field, what it is and the partner check's codes (Partner and
	// AccountNumber are the request's).
	Check accountCheck
	// Valid checks the account's shape (a field error names Check.Field).
	Valid func(partner, accountNumber string) error
	// Get reads the settings (ok false: not set); Put stores the account as actor's.
	Get func(ctx context.Context, tx pgx.Tx) (st S, ok bool, err error)
	Put func(ctx context.Context, tx pgx.Tx, partner, accountNumber, actor string) (S, error)
	// JSON is the answer for the settings (ok false: not set).
	JSON func(st S, ok bool) J
}

// readAccountSetting reads the organization's setting (ok false: not set).
func readAccountSetting[S, J any](s *Server, c *gin.Context, a accountSetting[S, J]) (st S, ok bool, err error) {
	type got struct {
		st S
		ok bool
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (got, error) {
		st, ok, err := a.Get(ctx, tx)
		return got{st, ok}, err
	})
	return out.st, out.ok, err
}

// getAccountSetting answers the organization's setting.
func getAccountSetting[S, J any](s *Server, c *gin.Context, a accountSetting[S, J]) {
	st, ok, err := readAccountSetting(s, c, a)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, a.JSON(st, ok))
}

// putAccountSetting sets the organization's account, acct being the request's (nil: missing),
// once the partner has confirmed it.
func putAccountSetting[S, J any](s *Server, c *gin.Context, a accountSetting[S, J], acct *partnerAccountJSON) {
	if acct == nil {
		writeError(c, fieldError(&field.Error{Field: a.Check.Field, Problem: "is required"}))
		return
	}
	if err := a.Valid(acct.Partner, acct.AccountNumber); err != nil {
		writeError(c, fieldError(err))
		return
	}
	check := a.Check
	check.Partner, check.AccountNumber = acct.Partner, acct.AccountNumber
	if e := s.checkPartnerAccount(c, check); e != nil {
		writeError(c, e)
		return
	}
	actor := callerOf(c).User.ID
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (S, error) {
		return a.Put(ctx, tx, acct.Partner, acct.AccountNumber, actor)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, a.JSON(out, true))
}
