package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/uploads"
)

// GET /api/kyc/<id>/documents: a submission's documents (the photo first, then each document by
// type) with what the upload store records of each — file name, declared and sniffed media type,
// size, when and by whom it was uploaded — and whether the stored bytes still hash to the SHA-256
// the submission bound (read again now: a reviewer never judges a file that changed). Who may
// read: a platform admin (any organization, on the audited cross-tenant path), the submission's
// own subject, and an admin of the submission's organization. Anyone else, and an id that does
// not exist, is answered 404 alike.

type kycSubmissionDocumentJSON struct {
	Type         string    `json:"type"`
	UploadKey    string    `json:"uploadKey"`
	SHA256       string    `json:"sha256"`
	FileName     string    `json:"fileName"`
	ContentType  string    `json:"contentType"`
	SniffedType  string    `json:"sniffedType"`
	SizeBytes    int64     `json:"sizeBytes"`
	UploadedBy   string    `json:"uploadedBy"`
	UploadedAt   time.Time `json:"uploadedAt"`
	Intact       bool      `json:"intact"`
	DownloadPath string    `json:"downloadPath"`
}

type kycSubmissionDocumentsJSON struct {
	SubmissionID   string                      `json:"submissionId"`
	OrganizationID string                      `json:"organizationId"`
	Status         kyc.Status                  `json:"status"`
	Documents      []kycSubmissionDocumentJSON `json:"documents"`
}

var errKycNotFound = NewError(http.StatusNotFound, "NOT_FOUND", "no such KYC submission")

func (s *Server) kycDocuments(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if s.deps.Uploads == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "uploads are not configured"))
		return
	}
	cl := callerOf(c)
	var out kycSubmissionDocumentsJSON
	var err error
	if cl.Platform {
		err = s.asPlatform(c, func(tx pgx.Tx) error {
			tenant, err := kycSubmissionTenant(c.Request.Context(), tx, id)
			if err != nil {
				return err
			}
			out, err = s.readKycDocuments(tenancy.WithTenant(c.Request.Context(), tenant), tx, tenant, id)
			return err
		})
	} else {
		sub, ok := s.selfSubject(c)
		if !ok {
			return
		}
		var k kyc.Submission
		ctx := tenancy.WithTenant(c.Request.Context(), sub.tenant)
		err = tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
			var err error
			k, err = kyc.ByID(ctx, tx, sub.tenant, id)
			if errors.Is(err, kyc.ErrNotFound) {
				return errKycNotFound
			}
			return err
		})
		if err == nil && (k.SubjectType != sub.typ || k.SubjectID != sub.id) {
			// Another subject's submission in the caller's organization: its admins only.
			if !s.admit(c, cl, sub.tenant, orgs.Admin, orgs.Permission{}) {
				return
			}
		}
		if err == nil {
			err = tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
				var err error
				out, err = s.readKycDocuments(ctx, tx, sub.tenant, id)
				return err
			})
		}
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// readKycDocuments reads submission id of tenant and each of its documents' upload records, and
// checks each stored file against the hash the submission bound.
func (s *Server) readKycDocuments(ctx context.Context, tx pgx.Tx, tenant, id string) (kycSubmissionDocumentsJSON, error) {
	k, err := kyc.ByID(ctx, tx, tenant, id)
	if errors.Is(err, kyc.ErrNotFound) {
		return kycSubmissionDocumentsJSON{}, errKycNotFound
	}
	if err != nil {
		return kycSubmissionDocumentsJSON{}, err
	}
	out := kycSubmissionDocumentsJSON{SubmissionID: k.ID, OrganizationID: tenant, Status: k.Status, Documents: make([]kycSubmissionDocumentJSON, 0, len(k.Documents))}
	for _, d := range k.Documents { // the photo first, then by type
		j := kycSubmissionDocumentJSON{Type: d.Type, UploadKey: d.UploadKey, SHA256: d.SHA256, DownloadPath: "/api/uploads/" + tenant + "/" + d.UploadKey}
		obj, err := uploads.Lookup(ctx, tx, tenant, d.UploadKey)
		switch {
		case errors.Is(err, uploads.ErrNotFound):
			// The record is gone: nothing to show but what the submission bound.
		case err != nil:
			return kycSubmissionDocumentsJSON{}, err
		default:
			j.FileName, j.ContentType, j.SniffedType, j.SizeBytes = obj.FileName, obj.ContentType, obj.SniffedType, obj.SizeBytes
			j.UploadedBy, j.UploadedAt = obj.UploadedBy, obj.CreatedAt.UTC()
			// Intact: the stored bytes hash to what was recorded at upload, and that is what
			// the submission bound.
			switch verr := uploads.VerifyContent(ctx, s.deps.Uploads, obj); {
			case verr == nil:
				j.Intact = obj.SHA256 == d.SHA256
			case errors.Is(verr, uploads.ErrHashMismatch), errors.Is(verr, uploads.ErrNotFound):
			default:
				return kycSubmissionDocumentsJSON{}, verr
			}
		}
		out.Documents = append(out.Documents, j)
	}
	return out, nil
}
