package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// Sanctions screening at the edge. The lists are loaded by `wagerail sanctions ingest`, never
// over HTTP. Checks are recorded by the flows that screen a subject (KYC approval, re-screening
// after an ingest); these routes read them and let a platform admin decide a hit:
//
//   - POST /api/sanctions/screen: a platform admin's ad-hoc lookup of a name. It has no subject
//     and no organization, so it records no check (and changes nothing); it answers what
//     screening would decide now.
//   - GET /api/sanctions/checks: every organization's checks (audited cross-tenant read).
//   - POST /api/sanctions/checks/{id}/review: CLEARED (a REVIEW that is a false positive) or
//     CONFIRMED; a BLOCK is never cleared.
//   - GET /api/me/sanctions: the checks about the caller (subject type USER with the caller's
//     user id, or an employee linked to the caller) in every organization, without the list
//     evidence, which is for compliance staff.

// sanctionsRoutes serves sanctions screening (/api/sanctions/*, /api/me/sanctions).
func (s *Server) sanctionsRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/sanctions/screen", Auth: Platform, Summary: "Screen a name against the active sanctions lists", Handler: s.screenName},
		{Method: http.MethodGet, Path: "/api/sanctions/checks", Auth: Platform, Summary: "Every organization's screening checks", Handler: s.listSanctionsChecks},
		{Method: http.MethodPost, Path: "/api/sanctions/checks/:id/review", Auth: Platform, Summary: "Decide a check that needs review", Handler: s.reviewSanctionsCheck},
		{Method: http.MethodGet, Path: "/api/me/sanctions", Auth: Session, Summary: "The caller's own screening checks", Handler: s.mySanctionsChecks},
	}
}

type sanctionsScreenRequest struct {
	Name string `json:"name"`
	DOB  string `json:"dob"`
}

// sanctionsError maps the sanctions store's errors; anything else passes.
func sanctionsError(err error) error {
	var fe *field.Error
	switch {
	case errors.As(err, &fe):
		return fieldError(err)
	case errors.Is(err, sanctions.ErrNoActiveList):
		return NewError(http.StatusServiceUnavailable, "SANCTIONS_LISTS_NOT_LOADED", "no sanctions list has been ingested yet (wagerail sanctions ingest)")
	case errors.Is(err, sanctions.ErrListOutdated):
		return NewError(http.StatusServiceUnavailable, "SANCTIONS_LISTS_OUTDATED",
			"the sanctions lists await renormalisation under this build's matching rules (wagerail sanctions rescreen)")
	case errors.Is(err, sanctions.ErrNotFound):
		return NewError(http.StatusNotFound, "NOT_FOUND", "no such sanctions check")
	case errors.Is(err, sanctions.ErrNotReviewable):
		return NewError(http.StatusConflict, "SANCTIONS_CHECK_NOT_REVIEWABLE", "the check does not await a review decision")
	case errors.Is(err, sanctions.ErrClearBlock):
		return NewError(http.StatusConflict, "SANCTIONS_BLOCK_NOT_CLEARABLE", "a BLOCK cannot be cleared; only a REVIEW can")
	}
	return err
}

func (s *Server) screenName(c *gin.Context) {
	var req sanctionsScreenRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	if err := field.Name("name", req.Name); err != nil {
		writeError(c, fieldError(err))
		return
	}
	dob, err := sanctions.ParseDOB(req.DOB, s.now())
	if err != nil {
		writeError(c, fieldError(&field.Error{Field: "dob", Problem: "must be a date YYYY-MM-DD between 1900-01-01 and today"}))
		return
	}
	res, err := sanctions.Screen(c.Request.Context(), s.deps.DB, req.Name, dob)
	if err != nil {
		writeError(c, sanctionsError(err))
		return
	}
	// A platform admin's look at a person against the lists is on the trail: who looked, when and
	// what it answered (never the name: the trail holds no unmasked personal data).
	if err := s.auditIn(c.Request.Context(), crosstenant.PlatformTenant, callerOf(c).User.ID, audit.Entry{Action: "ScreenName",
		Outcome: audit.Success, Details: map[string]any{"outcome": res.Outcome, "withDob": !dob.IsZero()}}); err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// sanctionsCheckJSON is a check as platform admins see it.
type sanctionsCheckJSON struct {
	ID           string               `json:"id"`
	TenantID     string               `json:"tenantId"`
	SubjectType  string               `json:"subjectType"`
	SubjectID    string               `json:"subjectId"`
	UserID       *string              `json:"userId"`
	Name         string               `json:"name"`
	DOB          *string              `json:"dob"`
	Outcome      string               `json:"outcome"`
	Score        float64              `json:"score"`
	Evidence     []sanctions.Evidence `json:"evidence"`
	ListVersions []int64              `json:"listVersions"`
	Trigger      string               `json:"trigger"`
	NeedsReview  bool                 `json:"needsReview"`
	Review       *sanctionsReviewJSON `json:"review"`
	CreatedAt    time.Time            `json:"createdAt"`
}

type sanctionsReviewJSON struct {
	Decision   string    `json:"decision"`
	ReviewedBy string    `json:"reviewedBy"`
	ReviewedAt time.Time `json:"reviewedAt"`
	Note       *string   `json:"note"`
}

func sanctionsOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func sanctionsReviewOf(c sanctions.Check) *sanctionsReviewJSON {
	if c.Decision == "" || c.ReviewedAt == nil {
		return nil
	}
	return &sanctionsReviewJSON{Decision: string(c.Decision), ReviewedBy: c.ReviewedBy, ReviewedAt: c.ReviewedAt.UTC(), Note: sanctionsOptional(c.ReviewNote)}
}

func toSanctionsCheckJSON(c sanctions.Check) sanctionsCheckJSON {
	ev := c.Evidence
	if ev == nil {
		ev = []sanctions.Evidence{}
	}
	return sanctionsCheckJSON{ID: c.ID, TenantID: c.TenantID, SubjectType: string(c.Subject.Type), SubjectID: c.Subject.ID,
		UserID: sanctionsOptional(c.Subject.UserID), Name: c.Name, DOB: sanctionsOptional(c.DOB), Outcome: string(c.Outcome), Score: c.Score,
		Evidence: ev, ListVersions: c.ListVersions, Trigger: string(c.Trigger), NeedsReview: c.NeedsReview,
		Review: sanctionsReviewOf(c), CreatedAt: c.CreatedAt.UTC()}
}

type sanctionsCheckListJSON struct {
	Checks     []sanctionsCheckJSON `json:"checks"`
	NextCursor *string              `json:"nextCursor"`
}

// ownSanctionsCheckJSON is a check as its subject sees it: the verdict and its state, not the
// list evidence.
type ownSanctionsCheckJSON struct {
	ID             string    `json:"id"`
	OrganizationID string    `json:"organizationId"`
	SubjectType    string    `json:"subjectType"`
	Outcome        string    `json:"outcome"`
	NeedsReview    bool      `json:"needsReview"`
	ReviewDecision *string   `json:"reviewDecision"`
	CreatedAt      time.Time `json:"createdAt"`
}

type ownSanctionsCheckListJSON struct {
	Checks     []ownSanctionsCheckJSON `json:"checks"`
	NextCursor *string                 `json:"nextCursor"`
}

// sanctionsPage reads limit and cursor (a previous page's nextCursor: a positive whole number)
// and, when allowed, the filters.
func sanctionsPage(c *gin.Context, filters bool) (sanctions.CheckFilter, *Error) {
	q := c.Request.URL.Query()
	known := map[string]bool{"limit": true, "cursor": true}
	if filters {
		known["outcome"], known["needsReview"], known["tenantId"] = true, true, true
	}
	limit, before, e := seqListQuery(q, known)
	if e != nil {
		return sanctions.CheckFilter{}, e
	}
	f := sanctions.CheckFilter{Limit: limit, Before: before}
	if q.Has("outcome") {
		switch o := sanctions.Outcome(q.Get("outcome")); o {
		case sanctions.Clear, sanctions.Review, sanctions.Block:
			f.Outcome = o
		default:
			return f, fieldError(&field.Error{Field: "outcome", Problem: "must be CLEAR, REVIEW or BLOCK"})
		}
	}
	if q.Has("needsReview") {
		switch q.Get("needsReview") {
		case "true", "false":
			b := q.Get("needsReview") == "true"
			f.NeedsReview = &b
		default:
			return f, fieldError(&field.Error{Field: "needsReview", Problem: "must be true or false"})
		}
	}
	if q.Has("tenantId") {
		f.TenantID = q.Get("tenantId")
		if err := field.Identifier("tenantId", f.TenantID, 0); err != nil {
			return f, fieldError(err)
		}
	}
	// One more than a page, to know whether there is a next one.
	f.Limit++
	return f, nil
}

// sanctionsNextCursor trims a page fetched with limit+1 and says where the next one starts.
func sanctionsNextCursor(page []sanctions.Check, limit int) ([]sanctions.Check, *string) {
	if len(page) <= limit {
		return page, nil
	}
	page = page[:limit]
	next := strconv.FormatInt(page[limit-1].Seq, 10)
	return page, &next
}

func (s *Server) listSanctionsChecks(c *gin.Context) {
	f, e := sanctionsPage(c, true)
	if e != nil {
		writeError(c, e)
		return
	}
	var page []sanctions.Check
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		page, err = sanctions.ListChecks(c.Request.Context(), tx, f)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := sanctionsCheckListJSON{Checks: []sanctionsCheckJSON{}}
	page, out.NextCursor = sanctionsNextCursor(page, f.Limit-1)
	for _, ch := range page {
		out.Checks = append(out.Checks, toSanctionsCheckJSON(ch))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) mySanctionsChecks(c *gin.Context) {
	f, e := sanctionsPage(c, false)
	if e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	f.UserID = cl.User.ID
	ctx := c.Request.Context()
	var page []sanctions.Check
	// Scoped to the user alone: RLS shows the checks about them in every organization.
	err := tenancy.InUserTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		page, err = sanctions.ListChecks(ctx, tx, f)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := ownSanctionsCheckListJSON{Checks: []ownSanctionsCheckJSON{}}
	page, out.NextCursor = sanctionsNextCursor(page, f.Limit-1)
	for _, ch := range page {
		out.Checks = append(out.Checks, ownSanctionsCheckJSON{ID: ch.ID, OrganizationID: ch.TenantID, SubjectType: string(ch.Subject.Type),
			Outcome: string(ch.Outcome), NeedsReview: ch.NeedsReview, ReviewDecision: sanctionsOptional(string(ch.Decision)), CreatedAt: ch.CreatedAt.UTC()})
	}
	c.JSON(http.StatusOK, out)
}

type sanctionsReviewRequest struct {
	Decision string `json:"decision"`
	Note     string `json:"note"`
}

func (s *Server) reviewSanctionsCheck(c *gin.Context) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	var req sanctionsReviewRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	d := sanctions.Decision(req.Decision)
	if d != sanctions.Cleared && d != sanctions.Confirmed {
		writeError(c, fieldError(&field.Error{Field: "decision", Problem: "must be CLEARED or CONFIRMED"}))
		return
	}
	if err := field.Text("note", req.Note, sanctions.MaxNoteBytes); err != nil {
		writeError(c, fieldError(err))
		return
	}
	ctx := c.Request.Context()
	reviewer := callerOf(c).User.ID
	var got sanctions.Check
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		got, err = sanctions.ResolveReview(ctx, tx, id, d, reviewer, req.Note, s.now())
		return err
	})
	if errors.Is(err, sanctions.ErrNotReviewable) || errors.Is(err, sanctions.ErrClearBlock) {
		// A refusal by a domain rule: audited DENIED in the check's organization, in a
		// transaction of its own (the attempt's rolled back).
		if aerr := s.sanctionsAuditDenied(ctx, got, d, sanctionsError(err)); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	if err != nil {
		writeError(c, sanctionsError(err))
		return
	}
	c.JSON(http.StatusOK, toSanctionsCheckJSON(got))
}

// sanctionsAuditDenied records a refused review decision on check ch.
func (s *Server) sanctionsAuditDenied(ctx context.Context, ch sanctions.Check, d sanctions.Decision, err error) error {
	code := ""
	var e *Error
	if errors.As(err, &e) {
		code = e.Code
	}
	return s.auditIn(ctx, ch.TenantID, tenancy.Actor(ctx), audit.Entry{Action: sanctions.ActionReviewDecided, Outcome: audit.Denied,
		TargetType: "SanctionsCheck", TargetID: ch.ID, Details: map[string]string{"decision": string(d), "code": code}})
}
