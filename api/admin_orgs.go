package api

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The platform's directory of organizations, one list per kind (the spec's /api/admin/businesses
// and /api/admin/financial-institutions among the portal families, and the merchants beside them):
// newest first, filtered by status, KYB review state and a part of the name, on the audited
// cross-tenant path (a CrossTenantAccess row names the admin and the route). Rules:
// internal/orgs/directory.go. Each organization's own routes (GET /api/business/<id>, its
// documents, its status) take it from there.

func (s *Server) adminOrgRoutes() []Route {
	list := func(path string, kind orgs.Kind, what string) Route {
		return Route{Method: http.MethodGet, Path: path, Auth: Platform,
			Summary: "The platform's " + what + " (newest first; by status, KYB state, part of the name; paged)",
			Handler: func(c *gin.Context) { s.listOrgDirectory(c, kind) }}
	}
	return []Route{
		list("/api/admin/businesses", orgs.Business, "businesses"),
		list("/api/admin/financial-institutions", orgs.FI, "financial institutions"),
		list("/api/admin/merchants", orgs.Merchant, "merchants"),
	}
}

var orgDirectoryParams = map[string]bool{"status": true, "kycStatus": true, "name": true, "limit": true, "cursor": true}

type orgDirectoryEntryJSON struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Kind          string     `json:"kind"`
	Status        string     `json:"status"`
	KYCStatus     string     `json:"kycStatus"`
	KYCReviewedAt *time.Time `json:"kycReviewedAt"`
	KYCDocuments  int64      `json:"kycDocuments"`
	ActiveMembers int64      `json:"activeMembers"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

func toOrgDirectoryEntryJSON(e orgs.DirectoryEntry) orgDirectoryEntryJSON {
	return orgDirectoryEntryJSON{ID: e.ID, Name: e.Name, Kind: string(e.Kind), Status: e.Status, KYCStatus: e.KYCStatus,
		KYCReviewedAt: utcPtr(e.KYCReviewedAt), KYCDocuments: e.SubmittedDocuments, ActiveMembers: e.ActiveMembers,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
}

func (s *Server) listOrgDirectory(c *gin.Context, kind orgs.Kind) {
	q := c.Request.URL.Query()
	limit, cursor, e := idListQuery(q, orgDirectoryParams)
	if e != nil {
		writeError(c, e)
		return
	}
	f := orgs.DirectoryQuery{Kind: kind, Before: cursor, Limit: limit + 1,
		Status: q.Get("status"), KYCStatus: q.Get("kycStatus"), Name: q.Get("name")}
	checks := []struct {
		set   bool
		check func() error
	}{
		{q.Has("status"), func() error {
			return enumCheck("status", "must be ACTIVE, SUSPENDED or DELETED", orgs.OrgStatuses...)(f.Status)
		}},
		{q.Has("kycStatus"), func() error {
			return enumCheck("kycStatus", "must be PENDING, VERIFIED or REJECTED", orgs.KYCStatuses...)(f.KYCStatus)
		}},
	}
	for _, ch := range checks {
		if ch.set {
			if err := ch.check(); err != nil {
				writeError(c, fieldError(err))
				return
			}
		}
	}
	if q.Has("name") {
		if f.Name, e = directoryName(f.Name); e != nil {
			writeError(c, e)
			return
		}
	}
	answerPlatformPage(s, c, limit, func(ctx context.Context, tx pgx.Tx) ([]orgs.DirectoryEntry, error) {
		return orgs.Directory(ctx, tx, f)
	}, func(e orgs.DirectoryEntry) string { return e.ID }, toOrgDirectoryEntryJSON)
}

// directoryName checks a search for a part of an organization's name (the name query of the
// organization and merchant directories): 1 to orgs.MaxDirectoryName characters, a name's
// characters (field.Name), not blank; it is searched for trimmed.
func directoryName(v string) (string, *Error) {
	if utf8.RuneCountInString(v) > orgs.MaxDirectoryName {
		return "", fieldError(&field.Error{Field: "name", Problem: "must be at most 64 characters"})
	}
	if err := field.Name("name", v); err != nil {
		return "", fieldError(err)
	}
	return strings.TrimSpace(v), nil
}
