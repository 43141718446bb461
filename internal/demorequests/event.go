package demorequests

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EventReceived is the event a NEW request writes in the transaction that stores it (Submit),
// under the platform tenant ("*"): a repeat of an address that answers its open request writes
// none. Its payload is Received. The sales consumer (SalesNotifier) mails it to the sales team.
const EventReceived = "demo_request.received.v1"

// Received is EventReceived's payload: the request's id and what sales needs to call back —
// every field of the submission as stored (normalised and validated). Phone, EmployeeCount and
// Message are null when the form left them out.
//
// It names a prospect (name, address, phone): consumers must not log it, and the event log
// (outbox.LogConsumer) logs an event's type and id only.
type Received struct {
	RequestID     string    `json:"requestId"`
	Name          string    `json:"name"`
	Company       string    `json:"company"`
	Email         string    `json:"email"`
	Phone         *string   `json:"phone"`
	EmployeeCount *int64    `json:"employeeCount"`
	Message       *string   `json:"message"`
	ReceivedAt    time.Time `json:"receivedAt"`
}

// received is the payload of the request r stored for s.
func received(r Receipt, s Submission) Received {
	return Received{RequestID: r.ID, Name: s.Name, Company: s.Company, Email: s.Email, Phone: none(s.Phone),
		EmployeeCount: s.EmployeeCount, Message: none(s.Message), ReceivedAt: r.ReceivedAt.UTC()}
}

// ErrInvalidEvent: an EventReceived payload that is not JSON, names no request, or holds a field
// the form would have refused. Such a payload did not come from Submit; nothing in it is used.
var ErrInvalidEvent = errors.New("demorequests: invalid " + EventReceived + " payload")

// ParseReceived reads an EventReceived payload and checks it by the form's own rules
// (Submission.Validate, ValidID): a consumer builds mail headers from these fields, so it must
// never take one the edge would refuse, whoever wrote the event. The error never echoes a value.
func ParseReceived(raw []byte) (Received, error) {
	var p Received
	if err := json.Unmarshal(raw, &p); err != nil {
		return Received{}, fmt.Errorf("%w: not a JSON object of its fields", ErrInvalidEvent)
	}
	if !ValidID(p.RequestID) {
		return Received{}, fmt.Errorf("%w: requestId names no demo request", ErrInvalidEvent)
	}
	if p.ReceivedAt.IsZero() {
		return Received{}, fmt.Errorf("%w: receivedAt is required", ErrInvalidEvent)
	}
	s := Submission{Name: p.Name, Email: p.Email, Company: p.Company, EmployeeCount: p.EmployeeCount}
	for _, f := range []struct {
		v   *string
		dst *string
	}{{p.Phone, &s.Phone}, {p.Message, &s.Message}} {
		if f.v != nil {
			if *f.v == "" {
				return Received{}, fmt.Errorf("%w: an empty phone or message is null", ErrInvalidEvent)
			}
			*f.dst = *f.v
		}
	}
	// The stored spelling: Normalize would change nothing.
	n := s
	n.Normalize()
	if n != s {
		return Received{}, fmt.Errorf("%w: a field is not in its stored spelling", ErrInvalidEvent)
	}
	if err := s.Validate(); err != nil {
		return Received{}, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	p.ReceivedAt = p.ReceivedAt.UTC()
	return p, nil
}
