package disputes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The dispute's customer: the employee whose money the disputed transaction is. An employee who
// raised the dispute is its customer; a dispute raised by a partner bank or by the platform is
// about a customer-attributable account, whose employee the chart name gives — the advances'
// receivable-from-employee:<employee>, a loan's receivable-from-borrower:<loan> (the loan's
// borrower) or a BNPL agreement's receivable-from-customer:<agreement> (the agreement's
// employee). Any other account has no customer to tell.

// customerBases are the chart's accounts of what a customer owes, each with one sub-account per
// customer (or per the customer's loan or agreement): a dispute is about one of them.
var customerBases = []string{chart.ReceivableFromEmployee, chart.ReceivableFromBorrower, chart.ReceivableFromCustomer}

// CustomerAccount is whether name is one customer's account: a base of customerBases and one
// identifier segment (receivable-from-employee:<employee>, receivable-from-borrower:<loan>,
// receivable-from-customer:<agreement>). A dispute platform support records names one.
func CustomerAccount(name string) bool {
	base, sub, ok := strings.Cut(name, ":")
	return ok && slices.Contains(customerBases, base) && !strings.Contains(sub, ":") &&
		field.Identifier("ledgerAccountName", sub, field.MaxIdentifier) == nil
}

// CustomerEmployee answers the employee a dispute of the transaction's tenant is about, and
// whether there is one (ErrNotFound for no dispute).
func CustomerEmployee(ctx context.Context, q db.Querier, id string) (string, bool, error) {
	d, err := Get(ctx, q, id)
	if err != nil {
		return "", false, err
	}
	if d.RaisedByType == RaisedByEmployee {
		return d.RaisedBySubjectID, true, nil
	}
	if !CustomerAccount(d.LedgerAccountName) {
		return "", false, nil
	}
	base, rest, _ := strings.Cut(d.LedgerAccountName, ":")
	var lookup string
	switch base {
	case chart.ReceivableFromEmployee:
		return rest, true, nil
	case chart.ReceivableFromBorrower:
		lookup = `SELECT borrower_id FROM app.loans WHERE tenant_id = $1 AND id = $2`
	default: // chart.ReceivableFromCustomer
		lookup = `SELECT employee_id FROM app.bnpl_agreements WHERE tenant_id = $1 AND id = $2`
	}
	var employee string
	err = q.QueryRow(ctx, lookup, d.TenantID, rest).Scan(&employee)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("disputes.customer: %w", err)
	}
	return employee, true, nil
}

// RecordCustomerNotified records that the dispute's customer was told of it on channels (the
// ones the message reached) by the notification of event eventType (id eventID): the dispute's
// customer_notified_at and a NOTIFIED dispute event, with the dispute's state unchanged. Only the
// first notification is recorded (changed false after it): a redelivered event, or a channel
// retried later, writes nothing. ErrNotFound for no dispute.
func RecordCustomerNotified(ctx context.Context, tx db.Querier, id, eventID, eventType string, channels []string, now time.Time) (changed bool, err error) {
	d, err := getForUpdate(ctx, tx, id)
	if err != nil {
		return false, err
	}
	if d.CustomerNotifiedAt != nil {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE app.disputes SET customer_notified_at = $2, updated_at = $2 WHERE id = $1`, id, now); err != nil {
		return false, fmt.Errorf("disputes.customer_notified: %w", err)
	}
	payload := map[string]any{"audience": "CUSTOMER", "channels": channels, "eventId": eventID, "eventType": eventType}
	if err := appendEvent(ctx, tx, d, EventNotified, payload, "", now); err != nil {
		return false, err
	}
	return true, nil
}
