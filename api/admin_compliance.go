package api

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// The platform compliance officer's work queue: GET /api/admin/compliance answers, in one read
// over every tenant, what awaits a compliance decision and how long it has waited — KYC
// submissions waiting for a reviewer (kyc.ReviewBacklog), sanctions checks awaiting a decision
// (sanctions.ReviewBacklog), organizations waiting on a KYB decision (orgs.KYBReviewBacklog: a
// PENDING review with documents on file, or a REJECTED one with documents filed since) — each
// queue's count, its oldest item's time and age, and its oldest items with the route that decides
// each. It shows what a reviewer needs to pick the next item, never a name, national id, date of
// birth or document: the decision routes show those. On the audited cross-tenant path (one
// CrossTenantAccess row), all queues as of one snapshot.
//
// Disputes are not here: they are decided by platform operators (POST
// /api/disputes/<id>/decisions), whose queue is the dispute list and its SLA alerts.

func (s *Server) adminComplianceRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/admin/compliance", Auth: Platform,
			Summary: "The compliance work queue: KYC, sanctions and KYB items awaiting a decision, each queue's count, oldest and oldest items",
			Handler: snapshot(s.complianceQueues)},
	}
}

// Compliance queue names, in the answer's order.
const (
	complianceKYC       = "kyc"
	complianceSanctions = "sanctions"
	complianceKYB       = "kyb"
)

var complianceQueueNames = []string{complianceKYC, complianceSanctions, complianceKYB}

// The items each queue lists: 1 to maxComplianceItems, defaultComplianceItems when not asked.
const (
	defaultComplianceItems = 10
	maxComplianceItems     = 50
)

var complianceParams = map[string]bool{"queue": true, "limit": true}

type complianceRouteJSON struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

type complianceItemJSON struct {
	ID        string  `json:"id"`
	TenantID  string  `json:"tenantId"`
	Kind      string  `json:"kind"`
	State     string  `json:"state"`
	SubjectID string  `json:"subjectId"`
	ClaimedBy *string `json:"claimedBy"`
	// MissingDocuments are a KYB item's required document types not filed yet (null elsewhere).
	MissingDocuments []string `json:"missingDocuments"`
	// Reason is why a KYB item waits (orgs.KYBSubmitted, orgs.KYBResubmitted; null elsewhere).
	Reason         *string               `json:"reason"`
	Since          time.Time             `json:"since"`
	AgeSeconds     int64                 `json:"ageSeconds"`
	DecisionRoutes []complianceRouteJSON `json:"decisionRoutes"`
}

type complianceQueueJSON struct {
	Queue            string               `json:"queue"`
	Count            int64                `json:"count"`
	OldestSince      *time.Time           `json:"oldestSince"`
	OldestAgeSeconds int64                `json:"oldestAgeSeconds"`
	Items            []complianceItemJSON `json:"items"`
}

// complianceQuery reads the query: each name known and given once (listQuery), queue one of the
// queues ("" all), limit a whole number from 1 to maxComplianceItems. A query that does not parse
// as parameters (a bad escape) is refused whole, not read without the pair it could not decode.
func complianceQuery(c *gin.Context) (queue string, limit int, e *Error) {
	q, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return "", 0, fieldError(&field.Error{Field: "query", Problem: "must be name=value pairs, percent-encoded"})
	}
	if e = listQuery(q, complianceParams); e != nil {
		return "", 0, e
	}
	if q.Has("queue") {
		queue = q.Get("queue")
		known := false
		for _, n := range complianceQueueNames {
			known = known || queue == n
		}
		if !known {
			return "", 0, fieldError(&field.Error{Field: "queue", Problem: "must be kyc, sanctions or kyb"})
		}
	}
	limit = defaultComplianceItems
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxComplianceItems {
			return "", 0, fieldError(&field.Error{Field: "limit", Problem: "must be a whole number from 1 to 50"})
		}
		limit = n
	}
	return queue, limit, nil
}

func (s *Server) complianceQueues(c *gin.Context) {
	only, limit, e := complianceQuery(c)
	if e != nil {
		writeError(c, e)
		return
	}
	want := func(q string) bool { return only == "" || only == q }
	ctx := c.Request.Context()
	var (
		kycQ kyc.Backlog
		sanQ sanctions.Backlog
		kybQ orgs.KYBBacklog
	)
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		if want(complianceKYC) {
			if kycQ, err = kyc.ReviewBacklog(ctx, tx, limit); err != nil {
				return err
			}
		}
		if want(complianceSanctions) {
			if sanQ, err = sanctions.ReviewBacklog(ctx, tx, limit); err != nil {
				return err
			}
		}
		if want(complianceKYB) {
			kybQ, err = orgs.KYBReviewBacklog(ctx, tx, limit)
		}
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := make([]complianceQueueJSON, 0, len(complianceQueueNames))
	if want(complianceKYC) {
		items := make([]complianceItemJSON, 0, len(kycQ.Oldest))
		for _, it := range kycQ.Oldest {
			items = append(items, complianceItemJSON{ID: it.ID, TenantID: it.TenantID, Kind: string(it.SubjectType), State: string(it.Status),
				SubjectID: it.SubjectID, ClaimedBy: optionalString(it.ClaimedBy), Since: it.Since.UTC(), AgeSeconds: it.AgeSeconds,
				DecisionRoutes: kycDecisionRoutes(it)})
		}
		out = append(out, complianceQueue(complianceKYC, kycQ.Count, items))
	}
	if want(complianceSanctions) {
		items := make([]complianceItemJSON, 0, len(sanQ.Oldest))
		for _, it := range sanQ.Oldest {
			items = append(items, complianceItemJSON{ID: it.ID, TenantID: it.TenantID, Kind: string(it.SubjectType), State: string(it.Outcome),
				SubjectID: it.SubjectID, Since: it.Since.UTC(), AgeSeconds: it.AgeSeconds,
				DecisionRoutes: []complianceRouteJSON{{http.MethodPost, "/api/sanctions/checks/" + url.PathEscape(it.ID) + "/review"}}})
		}
		out = append(out, complianceQueue(complianceSanctions, sanQ.Count, items))
	}
	if want(complianceKYB) {
		items := make([]complianceItemJSON, 0, len(kybQ.Oldest))
		for _, it := range kybQ.Oldest {
			items = append(items, complianceItemJSON{ID: it.ID, TenantID: it.ID, Kind: string(it.Kind), State: it.State,
				SubjectID: it.ID, MissingDocuments: it.Missing, Reason: optionalString(it.Reason), Since: it.Since.UTC(),
				AgeSeconds: it.AgeSeconds, DecisionRoutes: kybDecisionRoutes(it)})
		}
		out = append(out, complianceQueue(complianceKYB, kybQ.Count, items))
	}
	c.JSON(http.StatusOK, gin.H{"queues": out})
}

// complianceQueue is a queue's answer: its oldest item (the first, items being oldest first) is
// the queue's oldest.
func complianceQueue(name string, count int64, items []complianceItemJSON) complianceQueueJSON {
	q := complianceQueueJSON{Queue: name, Count: count, Items: items}
	if len(items) > 0 {
		since := items[0].Since
		q.OldestSince, q.OldestAgeSeconds = &since, items[0].AgeSeconds
	}
	return q
}

// kycDecisionRoutes are the next moves on a waiting submission (api/kyc.go): a PENDING one is
// claimed first; a claimed one is approved, rejected or sent back for more information.
func kycDecisionRoutes(it kyc.BacklogItem) []complianceRouteJSON {
	base := "/api/kyc/" + url.PathEscape(it.ID)
	if it.Status == kyc.Pending {
		return []complianceRouteJSON{{http.MethodPost, base + "/claim"}}
	}
	return []complianceRouteJSON{{http.MethodPost, base + "/approve"}, {http.MethodPost, base + "/reject"},
		{http.MethodPost, base + "/request-more-info"}}
}

// kybDecisionRoutes is the KYB review route of the organization's kind (kycDocumentMounts).
func kybDecisionRoutes(it orgs.KYBBacklogItem) []complianceRouteJSON {
	for _, m := range kycDocumentMounts {
		if m.kind == it.Kind {
			return []complianceRouteJSON{{http.MethodPut, m.prefix + "/" + url.PathEscape(it.ID) + "/verify-kyc"}}
		}
	}
	return []complianceRouteJSON{}
}
