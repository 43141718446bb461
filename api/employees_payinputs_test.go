package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmployeePayInputs: the termination date, the TIN and the pay cadence through the API.
// A termination date is a real date on or after the hire date (the stored one when the request
// has none), "" clears it, and it leaves the status alone; a re-hire clears it. A TIN is 10
// digits, answered masked (never in full), unique in the business (409 DUPLICATE_TIN, audited
// DENIED). payCadence follows the payment frequency's cadence, MONTHLY without one.
func TestEmployeePayInputs(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	rec := w.call(w.owner, http.MethodPost, "/api/payment-frequencies", map[string]any{"name": "Fortnightly", "cadence": "BIWEEKLY"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

	body := w.body("PAY000001")
	body["terminationDate"], body["tin"], body["paymentFrequency"] = "2026-12-31", "0741852963", "fortnightly"
	e := w.create(w.owner, body)
	require.Equal(t, "2026-12-31", *e.TerminationDate)
	require.Equal(t, "****2963", *e.TIN)
	require.Equal(t, "BIWEEKLY", string(e.PayCadence))
	require.Equal(t, "Fortnightly", *e.PaymentFrequency)
	require.Equal(t, "ACTIVE", string(e.Status), "a last day to come is a notice, not a termination")
	plainBody := w.body("PAY000002")
	delete(plainBody, "paymentFrequency")
	plain := w.create(w.owner, plainBody)
	require.Nil(t, plain.TerminationDate)
	require.Nil(t, plain.TIN)
	require.Equal(t, "MONTHLY", string(plain.PayCadence), "existing clients that send none: monthly")

	// A full TIN never comes back, in any answer.
	for _, path := range []string{"/api/employees/" + e.ID, "/api/employees?limit=100"} {
		rec := w.call(w.owner, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code)
		require.NotContains(t, rec.Body.String(), "0741852963")
		require.Contains(t, rec.Body.String(), `"tin":"****2963"`)
	}

	// The same TIN in the business: 409, audited DENIED, nothing stored; "" clears.
	before := w.listed(t)
	dup := w.body("PAY000003")
	dup["tin"] = "0741852963"
	rec = w.call(w.owner, http.MethodPost, "/api/employees", dup)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "DUPLICATE_TIN", errCode(rec))
	require.Equal(t, before, w.listed(t))
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+plain.ID, map[string]any{"tin": "0741852963"})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, 1, w.deniedWith(w.a, "CreateEmployee", "DUPLICATE_TIN"))
	require.Equal(t, 1, w.deniedWith(w.a, "UpdateEmployee", "DUPLICATE_TIN"))
	other := w.body("PAY000003")
	other["tin"] = "0741852963"
	w.create(w.otherOwn, other) // another business may employ the same taxpayer

	// Bad values: 400 naming the field, from the document and the handler alike.
	for _, tc := range []struct {
		body  map[string]any
		field string
		// byPattern: the document's patterns refuse it too (a date that does not exist and the
		// order of two dates are the format's and the words' to say).
		byPattern bool
	}{
		{map[string]any{"tin": "074185296"}, "tin", true},
		{map[string]any{"tin": "07418529639"}, "tin", true},
		{map[string]any{"tin": "0741-852963"}, "tin", true},
		{map[string]any{"tin": " 0741852963"}, "tin", true},
		{map[string]any{"tin": "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669\u0660"}, "tin", true},
		{map[string]any{"terminationDate": "2026-02-30"}, "terminationDate", false},
		{map[string]any{"terminationDate": "31/12/2026"}, "terminationDate", true},
		{map[string]any{"terminationDate": "1899-12-31"}, "terminationDate", true},
		{map[string]any{"hireDate": "2024-03-01", "terminationDate": "2024-02-29"}, "terminationDate", false},
	} {
		rec := w.hostile(w.owner, http.MethodPut, "/api/employees/"+plain.ID, tc.body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", tc.body, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"field":"`+tc.field+`"`, "%v", tc.body)
		if tc.byPattern {
			require.Error(t, w.owner.documentVerdict(http.MethodPut, "/api/employees/"+plain.ID, tc.body), "%v", tc.body)
		}
	}
	// Before the stored hire date (no hireDate in the request): the handler's rule the document
	// names in words.
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+plain.ID, map[string]any{"terminationDate": "2024-02-29"})
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"field":"terminationDate"`)
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+e.ID, map[string]any{"hireDate": "2027-01-01"})
	require.Equal(t, http.StatusBadRequest, rec.Code, "a hire date after the stored last day: %s", rec.Body.String())

	// Changes: the hire day itself is a last day; "" clears; the events name the fields.
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+plain.ID, map[string]any{"terminationDate": "2024-03-01", "tin": "0000000001"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[employeeJSON](t, rec)
	require.Equal(t, "2024-03-01", *got.TerminationDate)
	require.Equal(t, "****0001", *got.TIN)
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+plain.ID, map[string]any{"terminationDate": "", "tin": ""})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[employeeJSON](t, rec)
	require.Nil(t, got.TerminationDate)
	require.Nil(t, got.TIN)
	events := w.events(w.a, "employee.updated.v1")
	require.Equal(t, []any{"terminationDate", "tin"}, events[len(events)-1]["fields"])

	// Terminated, then re-hired: the old last day goes with the termination.
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+e.ID+"/status", map[string]any{"status": "TERMINATED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "2026-12-31", *decode[employeeJSON](t, rec).TerminationDate)
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+e.ID+"/status", map[string]any{"status": "ACTIVE"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Nil(t, decode[employeeJSON](t, rec).TerminationDate)
	events = w.events(w.a, "employee.updated.v1")
	require.Equal(t, []any{"status", "terminationDate"}, events[len(events)-1]["fields"])

	// The payment frequency's cadence changes: the employee's follows.
	rec = w.call(w.owner, http.MethodGet, "/api/payment-frequencies", nil)
	var fortnightly string
	for _, it := range decode[catalogList[catalogEntryOut]](t, rec).Items {
		if it.Name == "Fortnightly" {
			fortnightly = it.ID
		}
	}
	rec = w.call(w.owner, http.MethodPut, "/api/payment-frequencies/"+fortnightly, map[string]any{"cadence": "SEMI_MONTHLY"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+e.ID, nil)
	require.Equal(t, "SEMI_MONTHLY", string(decode[employeeJSON](t, rec).PayCadence))

	// CSV import: the optional columns, with the same rules.
	file := csvFile(t, importCols,
		w.importCells("PAY000100", "terminationDate", "2025-06-30", "tin", "0000000100"),
		w.importCells("PAY000101", "tin", "0000000100"),
		w.importCells("PAY000102", "tin", "0741852963"),
		w.importCells("PAY000103", "terminationDate", "2024-01-31"),
		w.importCells("PAY000104", "terminationDate", "2025-02-29"))
	res := w.imported(w.importFile(w.owner, file, "", false))
	require.Equal(t, 1, res.Created)
	codes := []string{}
	for _, r := range res.Results[1:] {
		codes = append(codes, r.Code+":"+r.Field)
	}
	require.Equal(t, []string{"DUPLICATE_TIN:", "DUPLICATE_TIN:", "INVALID_REQUEST:terminationDate", "INVALID_REQUEST:terminationDate"}, codes)
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+res.Results[0].EmployeeID, nil)
	imported := decode[employeeJSON](t, rec)
	require.Equal(t, "2025-06-30", *imported.TerminationDate)
	require.Equal(t, "****0100", *imported.TIN)
	require.Equal(t, "MONTHLY", string(imported.PayCadence))
}
