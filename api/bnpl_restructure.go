package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A platform operator restructures a BNPL agreement (POST /api/bnpl/agreements/<id>/restructure,
// Idem), as a loan is restructured (lending_servicing.go): the route's Resolve finds the
// agreement's business on the audited cross-tenant path (another id is 404), the change runs in
// that business's scope through row-level security, and the store (internal/bnpl/restructure.go)
// decides. It moves no money, so it is one transaction, not a saga.

// resolveBnplTenant scopes the request to the business whose agreement the path names (404
// BNPL_AGREEMENT_NOT_FOUND for no such agreement).
func (s *Server) resolveBnplTenant(c *gin.Context) {
	s.resolveTenantOf(c, `SELECT tenant_id FROM app.bnpl_agreements WHERE id = $1`,
		payrollError(bnpl.RefusalError(bnpl.CodeAgreementNotFound)))
}

type bnplRestructureRequest struct {
	Instalments *int    `json:"instalments"`
	FirstPeriod *string `json:"firstPeriod"`
	Reason      *string `json:"reason"`
}

type bnplRestructuredJSON struct {
	Agreement         bnplAgreementJSON `json:"agreement"`
	ScheduleVersion   int               `json:"scheduleVersion"`
	OutstandingSantim int64             `json:"outstandingSantim"`
	Superseded        []int             `json:"superseded"`
}

// restructureBnplAgreement replaces the agreement's DUE instalments by a new schedule of the same
// total (200 with the agreement, its whole schedule, superseded rows included), or answers the
// refusal (409, audited DENIED RestructureBnplAgreement; nothing else written).
func (s *Server) restructureBnplAgreement(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req bnplRestructureRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"instalments", req.Instalments != nil}, required{"firstPeriod", req.FirstPeriod != nil},
		required{"reason", req.Reason != nil}); e != nil {
		writeError(c, e)
		return
	}
	in := bnpl.RestructureRequest{Instalments: *req.Instalments, FirstPeriod: *req.FirstPeriod, Reason: *req.Reason}
	if err := in.Check(payroll.PeriodOf(s.now())); err != nil {
		writeError(c, fieldError(err))
		return
	}
	// In the resolved business's scope, through row-level security (as inLoanTenant): the
	// operator's authority is the route's guard.
	var out bnpl.Restructured
	ctx := c.Request.Context()
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) (err error) {
		out, err = bnpl.Restructure(ctx, tx, id, in, s.now())
		return err
	})
	if err != nil {
		s.payrollAnswer(c, bnpl.ActionRestructure, "BnplAgreement", id, err)
		return
	}
	superseded := out.Superseded
	if superseded == nil {
		superseded = []int{}
	}
	c.JSON(http.StatusOK, bnplRestructuredJSON{Agreement: toBnplAgreementJSON(out.Agreement), ScheduleVersion: out.Version,
		OutstandingSantim: out.OutstandingSantim, Superseded: superseded})
}
