package demorequests

import (
	"regexp"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Status is where a request stands in the platform's inbox.
type Status string

const (
	New       Status = "NEW"
	Contacted Status = "CONTACTED"
	Qualified Status = "QUALIFIED"
	// Closed is final: a closed request is never changed again, and a new submission of its
	// address is a new request.
	Closed Status = "CLOSED"
)

// Statuses are every status, in the inbox's order.
var Statuses = []Status{New, Contacted, Qualified, Closed}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	switch s {
	case New, Contacted, Qualified, Closed:
		return true
	}
	return false
}

// Bounds of a submission (the document's and migration app/0094's too).
const (
	MaxEmployeeCount = 1_000_000
	// MaxMessage and MaxNote are in bytes of UTF-8: free text as field.Text bounds it.
	MaxMessage = field.MaxText
	MaxNote    = field.MaxText
	// DedupeWindow is how long a submission of an address that has an open (not CLOSED) request
	// answers that request instead of adding another.
	DedupeWindow = 24 * time.Hour
)

// idPattern is what NewID mints; anything else names no request.
var idPattern = regexp.MustCompile(`^dmr_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// NewID is a new request id: dmr_ and a UUIDv7.
func NewID() string { return "dmr_" + identity.NewID() }

// ValidID reports whether id is one NewID could have minted.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Submission is what the public form sends.
type Submission struct {
	Name    string
	Email   string
	Company string
	// Phone, Message: "" is none.
	Phone   string
	Message string
	// EmployeeCount: nil is none.
	EmployeeCount *int64
}

// Normalize puts every field in its stored spelling: trimmed, the e-mail lower-cased.
func (s *Submission) Normalize() {
	for _, p := range []*string{&s.Name, &s.Company, &s.Phone, &s.Message} {
		*p = strings.TrimSpace(*p)
	}
	s.Email = identity.NormalizeEmail(s.Email)
}

// Validate checks a normalized submission and returns the first broken rule as a *field.Error
// (names as the API spells them). It never echoes a value.
func (s *Submission) Validate() error {
	if err := field.Name("name", s.Name); err != nil {
		return err
	}
	if err := field.Email("email", s.Email); err != nil {
		return err
	}
	if err := field.Name("company", s.Company); err != nil {
		return err
	}
	if s.Phone != "" {
		if err := field.Phone("phone", s.Phone); err != nil {
			return err
		}
	}
	if n := s.EmployeeCount; n != nil && (*n < 1 || *n > MaxEmployeeCount) {
		return &field.Error{Field: "employeeCount", Problem: "must be a whole number from 1 to 1000000"}
	}
	return field.Text("message", s.Message, MaxMessage)
}

// Receipt is what a submission is answered with: nothing of the request's content, which may be
// another person's when the address was theirs.
type Receipt struct {
	ID         string
	Status     Status
	ReceivedAt time.Time
}

// Request is one request of the inbox.
type Request struct {
	ID      string
	Seq     int64
	Name    string
	Email   string
	Company string
	Phone   *string
	// EmployeeCount, Message, Note: nil is none.
	EmployeeCount *int64
	Message       *string
	Status        Status
	Note          *string
	ReceivedAt    time.Time
	UpdatedAt     *time.Time
	UpdatedBy     *string
}

// Change is the platform's update of a request: its new status and, when Note is not nil, its
// note ("" clears it).
type Change struct {
	Status Status
	Note   *string
}

// Normalize trims the note.
func (ch *Change) Normalize() {
	if ch.Note != nil {
		n := strings.TrimSpace(*ch.Note)
		ch.Note = &n
	}
}

// Validate checks a normalized change.
func (ch *Change) Validate() error {
	if !ch.Status.Valid() {
		return &field.Error{Field: "status", Problem: "must be NEW, CONTACTED, QUALIFIED or CLOSED"}
	}
	if ch.Note != nil {
		return field.Text("note", *ch.Note, MaxNote)
	}
	return nil
}
