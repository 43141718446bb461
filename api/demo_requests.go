package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Demo requests (the spec's /api/admin/demo-requests among the portal families): the marketing
// site's "request a demo" form posts to a public route, limited per client IP (ruleDemoRequestIP),
// and the platform's admins work the inbox. A submission is stored and audited SubmitDemoRequest
// (tenant "*", actor anonymous, the e-mail masked, never the message) in one transaction as the
// runtime role, which may add a request and read nothing of the table (migration app/0094); a
// new request also writes its demo_request.received.v1 event in that transaction, which the
// worker's sales consumer mails to the sales team (SALES_NOTIFY_EMAIL). A second submission of an
// address whose request is still open within 24 h adds nothing, no event either, so a double
// click or a retried post adds one request and tells sales once. Either way the answer is the same 202
// {"status":"RECEIVED"}, byte for byte: a visitor who types someone else's address learns nothing
// of whether that address asked before, nor when. The inbox's list and
// update run on the audited cross-tenant path; an update is audited UpdateDemoRequest (tenant "*",
// the admin as actor).

const (
	actionSubmitDemoRequest = "SubmitDemoRequest"
	actionUpdateDemoRequest = "UpdateDemoRequest"
	targetDemoRequest       = "DemoRequest"
)

func (s *Server) demoRequestRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/demo-requests", Auth: Public, Summary: "Request a demo (the marketing site's form)", Handler: s.submitDemoRequest},
		{Method: http.MethodGet, Path: "/api/admin/demo-requests", Auth: Platform, Summary: "The demo requests (filtered, newest first)", Handler: s.listDemoRequests},
		{Method: http.MethodPut, Path: "/api/admin/demo-requests/:id", Auth: Platform, Summary: "Move a demo request on (status, note)", Handler: s.updateDemoRequest},
	}
}

var (
	errDemoRequestNotFound = NewError(http.StatusNotFound, "DEMO_REQUEST_NOT_FOUND", "no such demo request")
	errDemoRequestClosed   = NewError(http.StatusConflict, "DEMO_REQUEST_CLOSED", "the demo request is CLOSED, which is final")
)

// demoRequestBody is the form. Unknown fields are refused (bindJSON).
type demoRequestBody struct {
	Name          string `json:"name"`
	Email         string `json:"email"`
	Company       string `json:"company"`
	Phone         string `json:"phone"`
	EmployeeCount *int64 `json:"employeeCount"`
	Message       string `json:"message"`
}

// demoRequestReceived is the public answer to every accepted submission, new or repeated.
var demoRequestReceived = gin.H{"status": "RECEIVED"}

// demoRequestJSON is one request of the inbox.
type demoRequestJSON struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Email         string     `json:"email"`
	Company       string     `json:"company"`
	Phone         *string    `json:"phone"`
	EmployeeCount *int64     `json:"employeeCount"`
	Message       *string    `json:"message"`
	Status        string     `json:"status"`
	Note          *string    `json:"note"`
	ReceivedAt    time.Time  `json:"receivedAt"`
	UpdatedAt     *time.Time `json:"updatedAt"`
	UpdatedBy     *string    `json:"updatedBy"`
}

func toDemoRequestJSON(r demorequests.Request) demoRequestJSON {
	return demoRequestJSON{ID: r.ID, Name: r.Name, Email: r.Email, Company: r.Company, Phone: r.Phone, EmployeeCount: r.EmployeeCount,
		Message: r.Message, Status: string(r.Status), Note: r.Note, ReceivedAt: r.ReceivedAt, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy}
}

// submitDemoRequest: 202 RECEIVED, whether it added a request or found the address's open
// request of the last 24 h (nothing added). Bad input is refused before the rate limit counts the request, so a
// mistyped form does not lock its sender out; every valid one counts, duplicates included.
func (s *Server) submitDemoRequest(c *gin.Context) {
	var req demoRequestBody
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	sub := demorequests.Submission{Name: req.Name, Email: req.Email, Company: req.Company, Phone: req.Phone,
		EmployeeCount: req.EmployeeCount, Message: req.Message}
	sub.Normalize()
	if err := sub.Validate(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !s.allow(c, ruleDemoRequestIP, c.ClientIP()) {
		return
	}
	ctx := tenancy.WithRequestID(tenancy.WithActor(platformScope(c.Request.Context()), anonymousActor), requestID(c))
	var (
		receipt demorequests.Receipt
		created bool
	)
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		if receipt, created, err = demorequests.Submit(ctx, tx, sub, s.now()); err != nil {
			return err
		}
		details := map[string]string{"email": logging.MaskLast4(sub.Email)}
		if !created {
			details["duplicate"] = "true"
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionSubmitDemoRequest, Outcome: audit.Success,
			TargetType: targetDemoRequest, TargetID: receipt.ID, Details: details})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusAccepted, demoRequestReceived)
}

// demoRequestFilters are the inbox list's query parameters.
var demoRequestFilters = map[string]bool{"limit": true, "cursor": true, "status": true, "from": true, "to": true}

// demoRequestQuery reads the list's query: each parameter at most once, none unknown.
func demoRequestQuery(c *gin.Context) (demorequests.Filter, *Error) {
	q := c.Request.URL.Query()
	var f demorequests.Filter
	limit, before, e := seqListQuery(q, demoRequestFilters)
	if e != nil {
		return f, e
	}
	f.Limit, f.Before = limit+1, before
	if q.Has("status") {
		if f.Status = demorequests.Status(q.Get("status")); !f.Status.Valid() {
			return f, fieldError(&field.Error{Field: "status", Problem: "must be NEW, CONTACTED, QUALIFIED or CLOSED"})
		}
	}
	if f.From, f.To, e = timeWindow(q); e != nil {
		return f, e
	}
	return f, nil
}

func (s *Server) listDemoRequests(c *gin.Context) {
	f, e := demoRequestQuery(c)
	if e != nil {
		writeError(c, e)
		return
	}
	answerPlatformPage(s, c, f.Limit-1, func(ctx context.Context, tx pgx.Tx) ([]demorequests.Request, error) {
		return demorequests.List(ctx, tx, f)
	}, func(r demorequests.Request) string { return strconv.FormatInt(r.Seq, 10) }, toDemoRequestJSON)
}

// demoRequestUpdateBody is the platform's update: the status, and the note when given ("" clears
// it; left out, it stays).
type demoRequestUpdateBody struct {
	Status string  `json:"status"`
	Note   *string `json:"note"`
}

// updateDemoRequest: 200 with the request as it now is; 404 DEMO_REQUEST_NOT_FOUND for an id that
// names no request (a malformed one too: ids are opaque); 409 DEMO_REQUEST_CLOSED for a CLOSED
// one (audited DENIED).
func (s *Server) updateDemoRequest(c *gin.Context) {
	var req demoRequestUpdateBody
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	ch := demorequests.Change{Status: demorequests.Status(req.Status), Note: req.Note}
	ch.Normalize()
	if err := ch.Validate(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	id := c.Param("id")
	if !demorequests.ValidID(id) {
		writeError(c, errDemoRequestNotFound)
		return
	}
	admin := callerOf(c).User.ID
	ctx := platformScope(c.Request.Context())
	var out demorequests.Request
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		r, from, err := demorequests.Update(ctx, tx, id, ch, admin, s.now())
		if err != nil {
			return err
		}
		out = r
		note := "unchanged"
		switch {
		case ch.Note == nil:
		case *ch.Note == "":
			note = "cleared"
		default:
			note = "set"
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionUpdateDemoRequest, Outcome: audit.Success, TargetType: targetDemoRequest,
			TargetID: id, Details: map[string]string{"from": string(from), "to": string(r.Status), "note": note}})
	})
	switch {
	case errors.Is(err, demorequests.ErrNotFound):
		writeError(c, errDemoRequestNotFound)
		return
	case errors.Is(err, demorequests.ErrClosed):
		if aerr := s.auditIn(ctx, crosstenant.PlatformTenant, admin, audit.Entry{Action: actionUpdateDemoRequest, Outcome: audit.Denied,
			TargetType: targetDemoRequest, TargetID: id, Details: map[string]string{"code": errDemoRequestClosed.Code, "to": string(ch.Status)}}); aerr != nil {
			writeError(c, aerr)
			return
		}
		writeError(c, errDemoRequestClosed)
		return
	case err != nil:
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toDemoRequestJSON(out))
}
