package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Disputes platform support records (POST /api/admin/disputes): a partner bank's dispute of a
// transaction that moved money through it (raisedByType PARTNER_BANK, its SLA the partner-bank
// policy: 5 business days by default), or one the platform found itself (INTERNAL, 14 calendar
// days). Employees raise their own on /api/me/disputes; this is the desk where the other two
// raisers of the spec's dispute model enter. The dispute is then worked as every other one
// (evidence, decisions, reopen) and its customer is told (dispute.opened.v1).

type recordDisputeRequest struct {
	TenantID            *string `json:"tenantId"`
	LedgerTransactionID *string `json:"ledgerTransactionId"`
	LedgerAccountName   *string `json:"ledgerAccountName"`
	RaisedByType        *string `json:"raisedByType"`
	Partner             *string `json:"partner"`
	Reason              *string `json:"reason"`
}

// check validates the request's shape (400 INVALID_REQUEST); what it names is checked against the
// organization and the ledger after.
func (r recordDisputeRequest) check() error {
	for _, f := range []struct {
		name string
		v    *string
	}{{"tenantId", r.TenantID}, {"ledgerTransactionId", r.LedgerTransactionID}, {"ledgerAccountName", r.LedgerAccountName},
		{"raisedByType", r.RaisedByType}, {"reason", r.Reason}} {
		if f.v == nil {
			return &field.Error{Field: f.name, Problem: "is required"}
		}
	}
	if err := field.Identifier("tenantId", *r.TenantID, 0); err != nil {
		return err
	}
	if err := checkLedgerTxID(*r.LedgerTransactionID); err != nil {
		return err
	}
	if !disputes.CustomerAccount(*r.LedgerAccountName) {
		return &field.Error{Field: "ledgerAccountName", Problem: "must be a customer's account: receivable-from-employee:<employee>, " +
			"receivable-from-borrower:<loan> or receivable-from-customer:<agreement>"}
	}
	switch disputes.RaisedBy(*r.RaisedByType) {
	case disputes.RaisedByPartnerBank:
		if r.Partner == nil {
			return &field.Error{Field: "partner", Problem: "is required with PARTNER_BANK"}
		}
		if err := field.Identifier("partner", *r.Partner, 64); err != nil {
			return err
		}
	case disputes.RaisedByInternal:
		if r.Partner != nil {
			return &field.Error{Field: "partner", Problem: "is only for PARTNER_BANK"}
		}
	default:
		return &field.Error{Field: "raisedByType", Problem: "must be PARTNER_BANK or INTERNAL (an employee raises their own)"}
	}
	return field.Text("reason", *r.Reason, 1000)
}

// recordDispute opens a dispute a partner bank raised, or the platform's own, on a customer's
// account of a business organization's POSTED transaction: 201 with the dispute. The amount is
// what the transaction charged that account (its posted debits there), as an employee's own
// dispute takes it. A partner bank disputes only a transaction that moved money at one of its
// accounts (a partner-bank:<partner>: entry).
func (s *Server) recordDispute(c *gin.Context) {
	var req recordDisputeRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := req.check(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	tenant := *req.TenantID
	err := s.asPlatformIn(c, tenant, func(ctx context.Context, tx pgx.Tx) error {
		_, err := orgs.OrganizationOfKind(ctx, tx, tenant, orgs.Business)
		return err
	})
	switch {
	case errors.Is(err, orgs.ErrNotFound):
		writeError(c, NewError(http.StatusNotFound, "ORGANIZATION_NOT_FOUND", "no such business organization"))
		return
	case err != nil:
		writeError(c, err)
		return
	}
	ltx, ok := s.disputedTransaction(c, tenant, *req.LedgerTransactionID)
	if !ok {
		return
	}
	account := *req.LedgerAccountName
	accountID, touched, amount, bounded := ownReceivableShare(ltx, account)
	raisedBy, subject := disputes.RaisedBy(*req.RaisedByType), callerOf(c).User.ID
	switch {
	case !touched:
		writeError(c, disputeRefusal(disputes.CodeAccountNotOnTransaction))
		return
	case raisedBy == disputes.RaisedByPartnerBank && !movedAtPartner(ltx, *req.Partner):
		writeError(c, disputeRefusal(disputes.CodePartnerNotOnTransaction))
		return
	case ltx.GetStatus() != ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED:
		writeError(c, disputeRefusal(disputes.CodeTransactionNotPosted))
		return
	}
	if !isCharge(ltx, amount, bounded) {
		writeError(c, disputeRefusal(disputes.CodeNotDisputable))
		return
	}
	if raisedBy == disputes.RaisedByPartnerBank {
		subject = *req.Partner
	}
	d, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		return disputes.Open(ctx, tx, s.disputeCalendar(), disputes.OpenInput{TenantID: tenant,
			LedgerTransactionID: ltx.GetId(), LedgerAccountID: accountID, LedgerAccountName: account,
			AmountSantim: amount, Currency: ltx.GetCurrency(), RaisedBy: raisedBy,
			RaisedBySubjectID: subject, Reason: *req.Reason, ActorUserID: callerOf(c).User.ID}, s.now())
	})
	if err != nil {
		writeError(c, disputeError(err))
		return
	}
	s.startDisputeWorkflow(c, d)
	c.JSON(http.StatusCreated, toDisputeJSON(d, s.now()))
}

// movedAtPartner is whether the transaction has an entry on one of partner's mirror accounts
// (partner-bank:<partner>:<account>): money that moved at that bank.
func movedAtPartner(tx *ledgerv1.Transaction, partner string) bool {
	prefix := chart.PartnerBankPrefix(partner)
	for _, e := range tx.GetEntries() {
		if strings.HasPrefix(e.GetAccountName(), prefix) {
			return true
		}
	}
	return false
}
