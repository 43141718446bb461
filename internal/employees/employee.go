package employees

import (
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Status is where an employee stands with their employer.
type Status string

const (
	Active     Status = "ACTIVE"
	OnLeave    Status = "ON_LEAVE"
	Suspended  Status = "SUSPENDED"
	Terminated Status = "TERMINATED"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case Active, OnLeave, Suspended, Terminated:
		return true
	}
	return false
}

// CanBecome reports whether an employee of status s may be moved to next. Active, on leave and
// suspended move freely among themselves and to terminated; a terminated employee can only be
// re-hired (back to ACTIVE): leave and suspension describe a running employment, which a
// termination has ended. Staying in the same status is not a change (callers treat it as a no-op).
func (s Status) CanBecome(next Status) bool {
	if !s.Valid() || !next.Valid() {
		return false
	}
	if s == Terminated {
		return next == Active || next == Terminated
	}
	return true
}

// PayoutAccount is where an employee's pay goes, as the employer records it: the partner bank
// (its identifier in the gateway), the account number at that bank and the holder's name. The
// holder name is checked against the bank's own before money moves; it is not proof of anything.
type PayoutAccount struct {
	Partner       string
	AccountNumber string
	HolderName    string
}

// Employee is one employee of a business (tenant).
type Employee struct {
	ID       string
	TenantID string
	// FirstName and LastName are the employee's given and family names; FullName is the name as a
	// whole (sanctions screening and payslips use it), "first last" unless given.
	FirstName, LastName, FullName string
	Email                         string // "" when unknown; lower-case
	Phone                         string // "" when unknown; E.164
	// NationalID is stored in full and shown only through MaskedNationalID.
	NationalID       string
	Department       string // "" when none
	Position         string // "" when none
	EmploymentType   string // "" when none (a name from the employer's catalog)
	PaymentFrequency string // "" when none (a name from the employer's catalog)
	HireDate         time.Time
	// TerminationDate is the last day the employee works (zero: none), never before HireDate. A
	// payroll pays a leaver pro rata up to and including it. It is independent of Status: a
	// future date on an ACTIVE employee is a notice being served, and a TERMINATED employee
	// filed before termination dates existed has none (status alone keeps them out of runs).
	// Re-hiring (SetStatus from TERMINATED to ACTIVE) clears it.
	TerminationDate time.Time
	// TIN is the taxpayer identification number the tax report names: 10 digits, "" when
	// unknown; unique among the tenant's live employees. Like the national id it is PII, shown
	// only through MaskedTIN.
	TIN    string
	Status Status
	// PayCadence is how often payroll runs pay the employee, read from the payment frequency
	// entry their PaymentFrequency names (catalogs.DefaultCadence, MONTHLY, when none). The
	// store fills it; writes ignore it.
	PayCadence catalogs.Cadence
	// GrossMonthlySalarySantim is 0 to MaxGrossMonthlySalarySantim.
	GrossMonthlySalarySantim int64
	Payout                   PayoutAccount
	// UserID is the linked login user ("" until a link invitation is accepted).
	UserID    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MaskedNationalID is the national id as every response shows it: its last four characters.
func (e Employee) MaskedNationalID() string { return logging.MaskLast4(e.NationalID) }

// MaskedTIN is the TIN as every response shows it (its last four digits), "" when none.
func (e Employee) MaskedTIN() string {
	if e.TIN == "" {
		return ""
	}
	return logging.MaskLast4(e.TIN)
}

// Bounds of an employee's fields beyond their kind's own (internal/platform/field).
const (
	// MaxGrossMonthlySalarySantim is money.MaxAmountSantim: a salary is paid as one amount (a
	// payroll entry, one transfer), so it is never larger than one amount may be. The table's
	// CHECK holds the same bound.
	MaxGrossMonthlySalarySantim = money.MaxAmountSantim
	MinNationalID               = 6
	MaxNationalID               = 32
	MaxAccountNumber            = 64
	MaxPartner                  = 64
	// TINDigits is the length of an Ethiopian taxpayer identification number.
	TINDigits = 10
	// MaxLabel bounds department, position, employment type and payment frequency.
	MaxLabel = 128
)

// Hire dates outside these years are mistakes (and Postgres has no year 0).
const (
	minHireYear = 1900
	maxHireYear = 2200
)

// NewID returns a fresh employee id, "emp_<uuidv7>" (time-ordered, so lists page by id in the
// order employees were added).
func NewID() string { return "emp_" + identity.NewID() }

// Normalize puts every field in its stored spelling: names and labels trimmed, the e-mail
// lower-cased, the national id upper-cased without spaces or hyphens, the full name defaulting
// to "first last". Validate expects a normalized employee.
func (e *Employee) Normalize() {
	for _, p := range []*string{&e.FirstName, &e.LastName, &e.FullName, &e.Phone, &e.Department, &e.Position,
		&e.EmploymentType, &e.PaymentFrequency, &e.Payout.Partner, &e.Payout.AccountNumber, &e.Payout.HolderName} {
		*p = strings.TrimSpace(*p)
	}
	e.Email = identity.NormalizeEmail(e.Email)
	e.NationalID = NormalizeNationalID(e.NationalID)
	if e.FullName == "" && e.FirstName != "" && e.LastName != "" {
		e.FullName = e.FirstName + " " + e.LastName
	}
	e.HireDate = dateOf(e.HireDate)
	e.TerminationDate = dateOf(e.TerminationDate)
}

// NormalizeNationalID is the stored spelling of a national id: upper case, without the spaces
// and hyphens people type to group its digits.
func NormalizeNationalID(v string) string {
	return strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(v)))
}

func dateOf(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Validate checks a normalized employee and returns the first broken rule as a *field.Error
// (names as the API spells them). It never echoes a value.
func (e *Employee) Validate() error {
	checks := []func() error{
		func() error { return field.Name("firstName", e.FirstName) },
		func() error { return field.Name("lastName", e.LastName) },
		func() error { return field.Name("fullName", e.FullName) },
		func() error { return optional(e.Email, func() error { return field.Email("email", e.Email) }) },
		func() error { return optional(e.Phone, func() error { return field.Phone("phone", e.Phone) }) },
		func() error { return ValidNationalID("nationalId", e.NationalID) },
		func() error { return label("department", e.Department) },
		func() error { return label("position", e.Position) },
		func() error { return label("employmentType", e.EmploymentType) },
		func() error { return label("paymentFrequency", e.PaymentFrequency) },
		func() error { return ValidHireDate("hireDate", e.HireDate) },
		func() error { return ValidTerminationDate("terminationDate", e.TerminationDate, e.HireDate) },
		func() error { return optional(e.TIN, func() error { return ValidTIN("tin", e.TIN) }) },
		func() error {
			if !e.Status.Valid() {
				return &field.Error{Field: "status", Problem: "must be ACTIVE, ON_LEAVE, SUSPENDED or TERMINATED"}
			}
			return nil
		},
		func() error { return ValidSalary("grossMonthlySalarySantim", e.GrossMonthlySalarySantim) },
		func() error { return field.Identifier("payoutAccount.partner", e.Payout.Partner, MaxPartner) },
		func() error {
			return field.Identifier("payoutAccount.accountNumber", e.Payout.AccountNumber, MaxAccountNumber)
		},
		func() error { return field.Name("payoutAccount.holderName", e.Payout.HolderName) },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func optional(v string, check func() error) error {
	if v == "" {
		return nil
	}
	return check()
}

// label checks an optional department, position, employment type or payment frequency.
func label(name, v string) error {
	if v == "" {
		return nil
	}
	if err := field.Name(name, v); err != nil {
		return err
	}
	if len(v) > MaxLabel {
		return &field.Error{Field: name, Problem: "must be at most 128 bytes"}
	}
	return nil
}

// ValidNationalID checks a normalized national id: 6 to 32 upper-case ASCII letters and digits.
func ValidNationalID(name, v string) error {
	if err := field.Identifier(name, v, MaxNationalID); err != nil {
		return err
	}
	if len(v) < MinNationalID {
		return &field.Error{Field: name, Problem: "must be 6 to 32 letters and digits"}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return &field.Error{Field: name, Problem: "must be 6 to 32 letters and digits"}
		}
	}
	return nil
}

// ValidHireDate checks a hire date: a calendar date in a plausible year.
func ValidHireDate(name string, d time.Time) error {
	if d.IsZero() {
		return &field.Error{Field: name, Problem: "is required"}
	}
	if y := d.Year(); y < minHireYear || y > maxHireYear {
		return &field.Error{Field: name, Problem: "must be a date between 1900 and 2200"}
	}
	return nil
}

// ValidTerminationDate checks an optional termination date (zero: none): a calendar date in a
// plausible year, not before the hire date (the same day is a one-day employment).
func ValidTerminationDate(name string, d, hired time.Time) error {
	if d.IsZero() {
		return nil
	}
	if y := d.Year(); y < minHireYear || y > maxHireYear {
		return &field.Error{Field: name, Problem: "must be a date between 1900 and 2200"}
	}
	if d.Before(hired) {
		return &field.Error{Field: name, Problem: "must not be before hireDate"}
	}
	return nil
}

// ValidTIN checks a TIN: exactly TINDigits ASCII digits (no spaces or separators).
func ValidTIN(name, v string) error {
	if len(v) != TINDigits {
		return &field.Error{Field: name, Problem: "must be 10 digits"}
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return &field.Error{Field: name, Problem: "must be 10 digits"}
		}
	}
	return nil
}

// ValidSalary checks a gross monthly salary: 0 to MaxGrossMonthlySalarySantim santim.
func ValidSalary(name string, v int64) error {
	if v < 0 || v > MaxGrossMonthlySalarySantim {
		return &field.Error{Field: name, Problem: "must be a whole number of santim from 0 to 1000000000000"}
	}
	return nil
}
