package orgs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Business organizations: the profile a platform admin onboards, its KYC review, its lifecycle
// (ACTIVE, SUSPENDED, DELETED) and the KYC documents every kind of organization files. Deleting is
// soft: the row, its members and everything that refers to it stay (money and audit need them);
// the request pipeline refuses members of a DELETED organization.

// Errors of the business and KYC document functions (besides ErrNotFound).
var (
	// ErrAlreadyDeleted: DeleteBusiness on a business that is DELETED.
	ErrAlreadyDeleted = errors.New("orgs: the organization is already deleted")
	// ErrDeleted: a change to a DELETED organization (deleting is final).
	ErrDeleted = errors.New("orgs: the organization is deleted")
	// ErrUnknownDocumentType: a document type outside the organization kind's list.
	ErrUnknownDocumentType = errors.New("orgs: unknown document type for this kind of organization")
	// ErrDocumentNotFound: the organization has no document of that type (errors.Is ErrNotFound).
	ErrDocumentNotFound = fmt.Errorf("%w: no document of this type", ErrNotFound)
	// ErrDocumentsMissing: KYC cannot be verified before every required document is filed; the
	// error is a *MissingDocumentsError naming them.
	ErrDocumentsMissing = errors.New("orgs: required KYC documents are missing")
)

// MissingDocumentsError names the required document types an organization has not filed.
type MissingDocumentsError struct{ Types []string }

func (e *MissingDocumentsError) Error() string {
	return ErrDocumentsMissing.Error() + ": " + strings.Join(e.Types, ", ")
}

func (e *MissingDocumentsError) Unwrap() error { return ErrDocumentsMissing }

// KYC review states (organizations.kyc_status).
const (
	KYCPending  = "PENDING"
	KYCVerified = "VERIFIED"
	KYCRejected = "REJECTED"
)

// BusinessProfile is what a business is registered as; "" means not given.
type BusinessProfile struct {
	LegalName      string
	TradeName      string
	TIN            string
	RegistrationNo string
	Industry       string
	Address        string
	ContactEmail   string
	ContactPhone   string
}

// BusinessOrg is a BUSINESS organization with its profile and KYC review.
type BusinessOrg struct {
	Organization
	Profile BusinessProfile
	// KYCNote, KYCReviewedAt and KYCReviewedBy describe the last KYC review (zero: never reviewed).
	KYCNote       string
	KYCReviewedAt *time.Time
	KYCReviewedBy string
	DeletedAt     *time.Time
}

const businessSelect = `SELECT ` + orgColumns + `, o.deleted_at, coalesce(o.kyc_note, ''), o.kyc_reviewed_at,
	coalesce(o.kyc_reviewed_by, ''), coalesce(b.legal_name, ''), coalesce(b.trade_name, ''), coalesce(b.tin, ''),
	coalesce(b.registration_no, ''), coalesce(b.industry, ''), coalesce(b.address, ''), coalesce(b.contact_email, ''),
	coalesce(b.contact_phone, '')
	FROM app.organizations o JOIN app.businesses b ON b.id = o.id WHERE o.kind = 'BUSINESS'`

func scanBusiness(row pgx.Row) (BusinessOrg, error) {
	var b BusinessOrg
	var docs []byte
	o, p := &b.Organization, &b.Profile
	err := row.Scan(&o.ID, &o.Name, &o.Kind, &o.Status, &o.KYCStatus, &docs, &o.CreatedAt, &o.UpdatedAt,
		&b.DeletedAt, &b.KYCNote, &b.KYCReviewedAt, &b.KYCReviewedBy,
		&p.LegalName, &p.TradeName, &p.TIN, &p.RegistrationNo, &p.Industry, &p.Address, &p.ContactEmail, &p.ContactPhone)
	if errors.Is(err, pgx.ErrNoRows) {
		return BusinessOrg{}, ErrNotFound
	}
	if err != nil {
		return BusinessOrg{}, fmt.Errorf("orgs: business: %w", err)
	}
	if err := json.Unmarshal(docs, &o.KYCDocuments); err != nil {
		return BusinessOrg{}, fmt.Errorf("orgs: kyc documents: %w", err)
	}
	return b, nil
}

// CreateBusiness makes a BUSINESS organization id with no members (a platform admin onboards it;
// its admins are added afterwards) and profile p; an empty legal name defaults to name. q's
// transaction must be scoped to id or be a platform admin's cross-tenant one.
func CreateBusiness(ctx context.Context, q db.Querier, id, name string, p BusinessProfile) (BusinessOrg, error) {
	if _, _, err := Create(ctx, q, NewOrganization{ID: id, Name: name, Kind: Business}, ""); err != nil {
		return BusinessOrg{}, err
	}
	if p.LegalName == "" {
		p.LegalName = name
	}
	if err := writeProfile(ctx, q, id, p); err != nil {
		return BusinessOrg{}, err
	}
	return BusinessByID(ctx, q, id)
}

func writeProfile(ctx context.Context, q db.Querier, id string, p BusinessProfile) error {
	_, err := q.Exec(ctx, `UPDATE app.businesses SET legal_name = nullif($2, ''), trade_name = nullif($3, ''),
		tin = nullif($4, ''), registration_no = nullif($5, ''), industry = nullif($6, ''), address = nullif($7, ''),
		contact_email = nullif($8, ''), contact_phone = nullif($9, ''), updated_at = now() WHERE id = $1`,
		id, p.LegalName, p.TradeName, p.TIN, p.RegistrationNo, p.Industry, p.Address, p.ContactEmail, p.ContactPhone)
	if err != nil {
		return fmt.Errorf("orgs: business profile: %w", err)
	}
	return nil
}

// BusinessByID returns the business (DELETED ones too); ErrNotFound when there is none visible
// to the transaction or the organization is not a business.
func BusinessByID(ctx context.Context, q db.Querier, id string) (BusinessOrg, error) {
	return scanBusiness(q.QueryRow(ctx, businessSelect+` AND o.id = $1`, id))
}

// businessForUpdate locks the business's organization row for the rest of the transaction, so
// concurrent changes apply one after the other.
func businessForUpdate(ctx context.Context, q db.Querier, id string) (BusinessOrg, error) {
	return scanBusiness(q.QueryRow(ctx, businessSelect+` AND o.id = $1 FOR UPDATE OF o`, id))
}

// BusinessMembership is a business seen from one of its members.
type BusinessMembership struct {
	Business BusinessOrg
	MemberID string
	Role     MemberRole
}

// BusinessesForUser returns the businesses userID is an ACTIVE member of (not DELETED ones),
// oldest first. Run it in tenancy.InUserTx: RLS shows the user's own memberships only.
func BusinessesForUser(ctx context.Context, q db.Querier, userID string) ([]BusinessMembership, error) {
	ms, err := ListForUser(ctx, q, userID, Business)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.Organization.ID)
	}
	rows, err := q.Query(ctx, businessSelect+` AND o.id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("orgs: businesses for user: %w", err)
	}
	byID, err := collectBusinesses(rows)
	if err != nil {
		return nil, err
	}
	out := make([]BusinessMembership, 0, len(ms))
	for _, m := range ms {
		if b, ok := byID[m.Organization.ID]; ok {
			out = append(out, BusinessMembership{Business: b, MemberID: m.MemberID, Role: m.Role})
		}
	}
	return out, nil
}

func collectBusinesses(rows pgx.Rows) (map[string]BusinessOrg, error) {
	defer rows.Close()
	out := map[string]BusinessOrg{}
	for rows.Next() {
		b, err := scanBusiness(rows)
		if err != nil {
			return nil, err
		}
		out[b.ID] = b
	}
	return out, rows.Err()
}

// ListBusinesses returns up to limit businesses visible to q (every one in a platform admin's
// cross-tenant transaction), DELETED ones included, ordered by id and starting after the id after
// ("" from the start).
func ListBusinesses(ctx context.Context, q db.Querier, after string, limit int) ([]BusinessOrg, error) {
	rows, err := q.Query(ctx, businessSelect+` AND o.id > $1 ORDER BY o.id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("orgs: list businesses: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BusinessOrg, error) { return scanBusiness(r) })
}

// UpdateBusiness applies change to the business (its Name and Profile; other fields are ignored)
// under a row lock and returns it as stored. ErrNotFound, ErrDeleted.
func UpdateBusiness(ctx context.Context, q db.Querier, id string, change func(*BusinessOrg) error) (BusinessOrg, error) {
	cur, err := businessForUpdate(ctx, q, id)
	if err != nil {
		return BusinessOrg{}, err
	}
	if cur.Status == OrgDeleted {
		return BusinessOrg{}, ErrDeleted
	}
	next := cur
	if err := change(&next); err != nil {
		return BusinessOrg{}, err
	}
	if next.Name == "" {
		return BusinessOrg{}, errors.New("orgs: a business needs a name")
	}
	if _, err := q.Exec(ctx, `UPDATE app.organizations SET name = $2, updated_at = now() WHERE id = $1`, id, next.Name); err != nil {
		return BusinessOrg{}, fmt.Errorf("orgs: update business: %w", err)
	}
	if err := writeProfile(ctx, q, id, next.Profile); err != nil {
		return BusinessOrg{}, err
	}
	return BusinessByID(ctx, q, id)
}

// KYCReview is a platform admin's decision on a business's KYC.
type KYCReview struct {
	Status   string // KYCVerified or KYCRejected
	Note     string
	Reviewer string // user id
	At       time.Time
}

// ReviewKYC records r for organization id of kind k. Verifying needs every document its kind
// requires filed (*MissingDocumentsError otherwise). A decision answers a resubmission
// (kyc_resubmitted_at, PutDocument): the mark is cleared. ErrNotFound (none, or of another kind),
// ErrDeleted.
func ReviewKYC(ctx context.Context, q db.Querier, id string, k Kind, r KYCReview) (Organization, error) {
	if r.Status != KYCVerified && r.Status != KYCRejected {
		return Organization{}, fmt.Errorf("orgs: invalid kyc decision %q", r.Status)
	}
	cur, err := lockOrganizationOfKind(ctx, q, id, k)
	if err != nil {
		return Organization{}, err
	}
	if r.Status == KYCVerified {
		if missing := MissingDocuments(k, cur.KYCDocuments); len(missing) > 0 {
			return Organization{}, &MissingDocumentsError{Types: missing}
		}
	}
	if _, err := q.Exec(ctx, `UPDATE app.organizations SET kyc_status = $2, kyc_note = nullif($3, ''),
		kyc_reviewed_at = $4, kyc_reviewed_by = $5, kyc_resubmitted_at = NULL, updated_at = now() WHERE id = $1`,
		id, r.Status, r.Note, r.At, r.Reviewer); err != nil {
		return Organization{}, fmt.Errorf("orgs: kyc review: %w", err)
	}
	return ByID(ctx, q, id)
}

// SetStatus sets organization id of kind k ACTIVE or SUSPENDED (a suspended organization can only
// be read by its members; a suspended FI or merchant takes no new business, see standing.go).
// ErrNotFound (none, or of another kind), ErrDeleted. The caller invalidates the access cache.
func SetStatus(ctx context.Context, q db.Querier, id string, k Kind, status string) (Organization, error) {
	if status != OrgActive && status != OrgSuspended {
		return Organization{}, fmt.Errorf("orgs: invalid organization status %q", status)
	}
	if _, err := lockOrganizationOfKind(ctx, q, id, k); err != nil {
		return Organization{}, err
	}
	if _, err := q.Exec(ctx, `UPDATE app.organizations SET status = $2, updated_at = now() WHERE id = $1`, id, status); err != nil {
		return Organization{}, fmt.Errorf("orgs: organization status: %w", err)
	}
	return ByID(ctx, q, id)
}

// DeleteBusiness soft-deletes the business at at: status DELETED, deleted_at set, every row kept.
// ErrNotFound, ErrAlreadyDeleted. The caller invalidates the access cache.
func DeleteBusiness(ctx context.Context, q db.Querier, id string, at time.Time) (BusinessOrg, error) {
	cur, err := businessForUpdate(ctx, q, id)
	if err != nil {
		return BusinessOrg{}, err
	}
	if cur.Status == OrgDeleted {
		return BusinessOrg{}, ErrAlreadyDeleted
	}
	if _, err := q.Exec(ctx, `UPDATE app.organizations SET status = 'DELETED', deleted_at = $2, updated_at = now()
		WHERE id = $1`, id, at); err != nil {
		return BusinessOrg{}, fmt.Errorf("orgs: delete business: %w", err)
	}
	return BusinessByID(ctx, q, id)
}

// KYC documents. The file itself is stored by the uploads route; an organization keeps a
// reference to it and what was declared about it, per document type.

// KYCDocument is one filed document, as stored in organizations.kyc_documents.
type KYCDocument struct {
	FileKey     string    `json:"fileKey"`
	FileName    string    `json:"fileName"`
	ContentType string    `json:"contentType"`
	SizeBytes   int64     `json:"sizeBytes"`
	UploadedAt  time.Time `json:"uploadedAt"`
	UploadedBy  string    `json:"uploadedBy"`
}

// MaxDocumentBytes bounds a KYC document's declared size (25 MiB).
const MaxDocumentBytes = 25 << 20

// DocumentContentTypes are the file types a KYC document may be: scans and photos of paper.
var DocumentContentTypes = []string{"application/pdf", "image/jpeg", "image/png"}

// documentTypes lists, per kind, the document types an organization files; every one is required
// before its KYC can be verified.
var documentTypes = map[Kind][]string{
	Business: {"business_license", "memorandum_of_association", "owner_id", "tin_certificate"},
	FI:       {"banking_license", "certificate_of_incorporation", "director_id", "tin_certificate"},
	Merchant: {"owner_id", "tin_certificate", "trade_license"},
}

// DocumentTypes returns the document types of kind k (sorted; a copy).
func DocumentTypes(k Kind) []string { return slices.Clone(documentTypes[k]) }

// ValidDocumentType reports whether t is a document type of kind k.
func ValidDocumentType(k Kind, t string) bool { return slices.Contains(documentTypes[k], t) }

// MissingDocuments returns the required document types of kind k that docs lacks (sorted).
func MissingDocuments(k Kind, docs map[string]json.RawMessage) []string {
	var out []string
	for _, t := range documentTypes[k] {
		if _, ok := docs[t]; !ok {
			out = append(out, t)
		}
	}
	return out
}

// Documents decodes an organization's filed documents.
func Documents(o Organization) (map[string]KYCDocument, error) {
	out := make(map[string]KYCDocument, len(o.KYCDocuments))
	for t, raw := range o.KYCDocuments {
		var d KYCDocument
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("orgs: kyc document %s: %w", t, err)
		}
		out[t] = d
	}
	return out, nil
}

// SortedDocumentTypes returns the keys of docs in order.
func SortedDocumentTypes(docs map[string]KYCDocument) []string {
	out := make([]string, 0, len(docs))
	for t := range docs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// OrganizationOfKind returns organization id when it is of kind k; ErrNotFound otherwise (an
// organization of another kind looks like none at all).
func OrganizationOfKind(ctx context.Context, q db.Querier, id string, k Kind) (Organization, error) {
	o, err := ByID(ctx, q, id)
	if err != nil {
		return Organization{}, err
	}
	if o.Kind != k {
		return Organization{}, ErrNotFound
	}
	return o, nil
}

// lockOrganizationOfKind locks organization id of kind k for a change; ErrNotFound, ErrDeleted.
func lockOrganizationOfKind(ctx context.Context, q db.Querier, id string, k Kind) (Organization, error) {
	o, err := scanOrg(q.QueryRow(ctx, `SELECT `+orgColumns+` FROM app.organizations o WHERE o.id = $1 FOR UPDATE`, id))
	if err != nil {
		return Organization{}, err
	}
	if o.Kind != k {
		return Organization{}, ErrNotFound
	}
	if o.Status == OrgDeleted {
		return Organization{}, ErrDeleted
	}
	return o, nil
}

// PutDocument files d as the organization's document of type docType, replacing any earlier one
// (replaced says so). Filing does not move the KYB review: a REJECTED organization stays
// REJECTED until a reviewer decides again (ReviewKYC), so the first document filed after a
// rejection marks the organization resubmitted at d.UploadedAt (kyc_resubmitted_at), which puts it
// on the compliance officer's KYB queue (KYBReviewBacklog). ErrUnknownDocumentType, ErrNotFound,
// ErrDeleted.
func PutDocument(ctx context.Context, q db.Querier, id string, k Kind, docType string, d KYCDocument) (replaced bool, err error) {
	if !ValidDocumentType(k, docType) {
		return false, ErrUnknownDocumentType
	}
	o, err := lockOrganizationOfKind(ctx, q, id, k)
	if err != nil {
		return false, err
	}
	_, replaced = o.KYCDocuments[docType]
	raw, err := json.Marshal(d)
	if err != nil {
		return false, fmt.Errorf("orgs: kyc document: %w", err)
	}
	if _, err := q.Exec(ctx, `UPDATE app.organizations SET kyc_documents = kyc_documents || jsonb_build_object($2::text, $3::jsonb),
		kyc_resubmitted_at = CASE WHEN kyc_status = 'REJECTED' THEN coalesce(kyc_resubmitted_at, $4) END,
		updated_at = now() WHERE id = $1`, id, docType, raw, d.UploadedAt); err != nil {
		return false, fmt.Errorf("orgs: put kyc document: %w", err)
	}
	return replaced, nil
}

// DeleteDocument removes the organization's document of type docType and returns it.
// ErrUnknownDocumentType, ErrNotFound, ErrDocumentNotFound, ErrDeleted.
func DeleteDocument(ctx context.Context, q db.Querier, id string, k Kind, docType string) (KYCDocument, error) {
	if !ValidDocumentType(k, docType) {
		return KYCDocument{}, ErrUnknownDocumentType
	}
	o, err := lockOrganizationOfKind(ctx, q, id, k)
	if err != nil {
		return KYCDocument{}, err
	}
	raw, ok := o.KYCDocuments[docType]
	if !ok {
		return KYCDocument{}, ErrDocumentNotFound
	}
	var d KYCDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		return KYCDocument{}, fmt.Errorf("orgs: kyc document %s: %w", docType, err)
	}
	if _, err := q.Exec(ctx, `UPDATE app.organizations SET kyc_documents = kyc_documents - $2::text, updated_at = now()
		WHERE id = $1`, id, docType); err != nil {
		return KYCDocument{}, fmt.Errorf("orgs: delete kyc document: %w", err)
	}
	return d, nil
}

// Onboarding steps of a business, in the order a platform admin works through them.
const (
	StepProfile   = "profile"   // legal name, TIN, registration number, industry, address, contact e-mail and phone
	StepDocuments = "documents" // every required KYC document filed
	StepAdmin     = "admin"     // an ACTIVE owner or admin who can act for the business
	StepKYC       = "kyc"       // KYC verified
)

// OnboardingStep is one step and, for the profile and documents steps, what it still lacks
// (profile fields by their API names, document types).
type OnboardingStep struct {
	Key     string
	Done    bool
	Missing []string
}

// Onboarding is a business's progress: its steps and the share done, in whole percent (rounded
// down, so 100 means every step is done).
type Onboarding struct {
	Steps   []OnboardingStep
	Percent int
}

// BusinessOnboarding computes the business's onboarding progress. ErrNotFound.
func BusinessOnboarding(ctx context.Context, q db.Querier, id string) (Onboarding, error) {
	b, err := BusinessByID(ctx, q, id)
	if err != nil {
		return Onboarding{}, err
	}
	var profile []string
	for _, f := range []struct{ name, v string }{
		{"legalName", b.Profile.LegalName}, {"tin", b.Profile.TIN}, {"registrationNumber", b.Profile.RegistrationNo},
		{"industry", b.Profile.Industry}, {"address", b.Profile.Address}, {"contactEmail", b.Profile.ContactEmail},
		{"contactPhone", b.Profile.ContactPhone},
	} {
		if f.v == "" {
			profile = append(profile, f.name)
		}
	}
	admins, err := ListMembers(ctx, q, id, Owner, Admin)
	if err != nil {
		return Onboarding{}, err
	}
	adminDone := slices.ContainsFunc(admins, func(m Member) bool { return m.Status == Active })
	docs := MissingDocuments(Business, b.KYCDocuments)
	steps := []OnboardingStep{
		{Key: StepProfile, Done: len(profile) == 0, Missing: profile},
		{Key: StepDocuments, Done: len(docs) == 0, Missing: docs},
		{Key: StepAdmin, Done: adminDone},
		{Key: StepKYC, Done: b.KYCStatus == KYCVerified},
	}
	done := 0
	for _, s := range steps {
		if s.Done {
			done++
		}
	}
	return Onboarding{Steps: steps, Percent: done * 100 / len(steps)}, nil
}
