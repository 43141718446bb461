package api

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The regression test of issue 21: driven through a validating proxy, 37 requests the document
// allowed were refused by a handler rule the schema did not say. Each rule below is sent twice:
// once broken (the document must refuse it, and so must the server, with the rule's code) and once
// at its allowed boundary (the document must accept it, and the server must not refuse it for
// that rule: its answer is the one the case names).

// ruleCase is one handler rule as a request that breaks it and one that sits on its boundary.
type ruleCase struct {
	name   string
	caller *apiClient
	method string
	// path and body break the rule; status and code are the server's refusal.
	path   string
	body   any
	hdr    []string
	status int
	code   string
	// okPath/okBody ("" / nil: path / none) are the allowed boundary; okStatus is the server's
	// answer to it (0: no boundary case, e.g. a second breaking case of the same rule).
	okPath   string
	okBody   any
	okHdr    []string
	okStatus int
	// okCode is the error code of an allowed request that another rule refuses ("" for a success).
	okCode string
}

func TestDocumentStatesEveryHandlerRule(t *testing.T) {
	u := newUploadsFixtureOn(t, testkit.NewDB(t), func(*Deps) {})
	f := u.authFixture
	owner, org := f.signUp("rules-owner@example.com", "BUSINESS")
	tenant := org.Organization.ID
	platform := f.platformAdmin("rules-platform@example.com")
	employee := f.catalogEmployee(tenant)
	f.addMember(tenant, "rules-admin@example.com", orgs.Admin)
	var adminMemberID string
	for _, m := range decode[struct {
		Admins []struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"admins"`
	}](t, platform.call(http.MethodGet, "/api/business/"+tenant+"/admins", nil)).Admins {
		if m.Email == "rules-admin@example.com" {
			adminMemberID = m.ID
		}
	}
	require.NotEmpty(t, adminMemberID)

	// Definitions the assignment cases give: one per case that creates an assignment, because a
	// second assignment of the same definition is 409 ALREADY_ASSIGNED, not the rule under test.
	allowance := func(code string) string {
		rec := owner.call(http.MethodPost, "/api/allowances", map[string]any{"name": "Allowance " + code, "code": code,
			"kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 500})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[catalogDefinitionOut](t, rec).ID
	}
	deduction := func(code string) string {
		rec := owner.call(http.MethodPost, "/api/deductions", map[string]any{"name": "Deduction " + code, "code": code,
			"kind": "FIXED_SANTIM", "amountSantim": 100})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[catalogDefinitionOut](t, rec).ID
	}
	allowanceA, allowanceB, deductionA := allowance("ALW-A"), allowance("ALW-B"), deduction("DED-A")
	rec := owner.call(http.MethodPost, "/api/departments", map[string]any{"name": "Operations"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	department := decode[catalogEntryOut](t, rec).ID

	employeeBody := func(nationalID string) map[string]any {
		return map[string]any{"firstName": "Tsehay", "lastName": "Bekele", "nationalId": nationalID, "hireDate": "2025-02-01",
			"grossMonthlySalarySantim": 1200000, "payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": "1000200030004", "holderName": "Tsehay Bekele"}}
	}
	kycBody := func(nationalID, dob string) map[string]any {
		return map[string]any{"fullName": "Abebe Kebede", "nationalId": nationalID, "dateOfBirth": dob,
			"photoKey":  "upl_0190a0b0-0000-7000-8000-000000000001",
			"documents": []map[string]any{{"type": "national_id", "uploadKey": "upl_0190a0b0-0000-7000-8000-000000000002"}}}
	}
	const csvHeader = "firstName,lastName,nationalId,hireDate,grossMonthlySalarySantim,payoutPartner,payoutAccountNumber,payoutHolderName"
	const csvRow = "Abebe,Kebede,CSV000001,2025-01-01,900000,sandbox,1000999,Abebe Kebede"
	upload := func(contentType string) ([]byte, []string) {
		body, ct := uploadsMultipart(uploadsFile("scan.pdf", contentType, uploadsPDF))
		return body, []string{"Content-Type", ct}
	}
	badUpload, badUploadHdr := upload("text/html")
	okUpload, okUploadHdr := upload("application/pdf")
	repay := "/api/ewa/requests/ewa_unknown/record-repayment"
	idem := []string{"Idempotency-Key", "rules-repay-1"}

	cases := []ruleCase{
		// BusinessFields: create needs a name; an update changes at least one field.
		{name: "business create requires name", caller: platform, method: http.MethodPost, path: "/api/business",
			body: map[string]any{"industry": "Retail"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Rules Trading"}, okStatus: 201},
		{name: "business update needs a field", caller: owner, method: http.MethodPut, path: "/api/business/" + tenant,
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"industry": "Retail"}, okStatus: 200},
		{name: "business name not blank", caller: owner, method: http.MethodPut, path: "/api/business/" + tenant,
			body: map[string]any{"name": "   "}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": " Rules Org "}, okStatus: 200},
		{name: "business contactEmail is an e-mail", caller: owner, method: http.MethodPut, path: "/api/business/" + tenant,
			body: map[string]any{"contactEmail": "finance@localhost"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"contactEmail": " Finance@Example.ET "}, okStatus: 200},
		{name: "business contactPhone is E.164", caller: owner, method: http.MethodPut, path: "/api/business/" + tenant,
			body: map[string]any{"contactPhone": "+0911234567"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"contactPhone": "+1234567"}, okStatus: 200},
		{name: "business registrationNumber has no inner space", caller: owner, method: http.MethodPut, path: "/api/business/" + tenant,
			body: map[string]any{"registrationNumber": "MT AA 1"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"registrationNumber": "MT/AA/1/0001/2024"}, okStatus: 200},

		// Two-factor verify: exactly one of code and backupCode. The allowed request reaches the
		// state check (no challenge or set-up pending), not the shape check.
		{name: "two-factor verify needs a code", caller: owner, method: http.MethodPost, path: "/api/auth/two-factor/verify",
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"code": "123456"}, okStatus: 409, okCode: "TWO_FACTOR_NOT_PENDING"},
		{name: "two-factor verify takes one code", caller: owner, method: http.MethodPost, path: "/api/auth/two-factor/verify",
			body: map[string]any{"code": "123456", "backupCode": "k3x9-7m2q"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"code": "", "backupCode": "k3x9-7m2q"}, okStatus: 409, okCode: "TWO_FACTOR_NOT_PENDING"},

		// Catalog assignments: the route's own id field, and only it.
		{name: "allowance assignment needs allowanceId", caller: owner, method: http.MethodPost, path: "/api/employees/" + employee + "/allowances",
			body: map[string]any{"deductionId": deductionA}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"allowanceId": allowanceA}, okStatus: 201},
		{name: "allowance assignment takes no deductionId", caller: owner, method: http.MethodPost, path: "/api/employees/" + employee + "/allowances",
			body: map[string]any{"allowanceId": allowanceB, "deductionId": deductionA}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"allowanceId": allowanceB, "deductionId": ""}, okStatus: 201},
		{name: "deduction assignment needs deductionId", caller: owner, method: http.MethodPost, path: "/api/employees/" + employee + "/deductions",
			body: map[string]any{"allowanceId": allowanceA}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"deductionId": deductionA, "amountSantim": 0}, okStatus: 201},
		{name: "assignment amount is not negative", caller: owner, method: http.MethodPost, path: "/api/employees/" + employee + "/allowances",
			body: map[string]any{"allowanceId": allowanceA, "basisPoints": -1}, status: 400, code: "INVALID_REQUEST"},
		{name: "assignment takes one amount", caller: owner, method: http.MethodPost, path: "/api/employees/" + employee + "/allowances",
			body: map[string]any{"allowanceId": allowanceA, "basisPoints": 1, "amountSantim": 1}, status: 400, code: "INVALID_REQUEST"},
		{name: "assignment basis points at most 10000", caller: owner, method: http.MethodPost, path: "/api/employees/" + employee + "/allowances",
			body: map[string]any{"allowanceId": allowanceA, "basisPoints": 10001}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"allowanceId": allowanceA, "basisPoints": 10000}, okStatus: 409, okCode: "ALREADY_ASSIGNED"},

		// Catalog definitions: basis points are at most 10,000, santim at most 1,000,000,000; the
		// kind's own amount, and only it.
		{name: "percent allowance at most 10000 bp", caller: owner, method: http.MethodPost, path: "/api/allowances",
			body:   map[string]any{"name": "Housing", "code": "HOUSING", "kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 10001},
			status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Housing", "code": "HOUSING", "kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 10000}, okStatus: 201},
		{name: "fixed deduction may pass 10000", caller: owner, method: http.MethodPost, path: "/api/deductions",
			body:   map[string]any{"name": "Loan", "code": "LOAN", "kind": "FIXED_SANTIM", "amountSantim": 1000000001},
			status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Loan", "code": "LOAN", "kind": "FIXED_SANTIM", "amountSantim": 10001}, okStatus: 201},
		{name: "fixed allowance takes amountSantim", caller: owner, method: http.MethodPost, path: "/api/allowances",
			body:   map[string]any{"name": "Meals", "code": "MEALS", "kind": "FIXED_SANTIM", "basisPoints": 100},
			status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Meals", "code": "MEALS", "kind": "FIXED_SANTIM", "amountSantim": 100}, okStatus: 201},
		{name: "percent deduction needs basisPoints", caller: owner, method: http.MethodPost, path: "/api/deductions",
			body:   map[string]any{"name": "Union", "code": "UNION", "kind": "PERCENT_OF_GROSS_BASIS_POINTS"},
			status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Union", "code": "UNION", "kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 0}, okStatus: 201},
		{name: "percent allowance update at most 10000 bp", caller: owner, method: http.MethodPut, path: "/api/allowances/" + allowanceA,
			body: map[string]any{"kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 10001}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 10000}, okStatus: 200},
		{name: "allowance update kind comes with its amount", caller: owner, method: http.MethodPut, path: "/api/allowances/" + allowanceA,
			body: map[string]any{"kind": "PERCENT_OF_GROSS_BASIS_POINTS"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"basisPoints": 9000}, okStatus: 200},
		{name: "allowance update one amount", caller: owner, method: http.MethodPut, path: "/api/allowances/" + allowanceA,
			body: map[string]any{"basisPoints": 1, "amountSantim": 1}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"amountSantim": 1}, okStatus: 422, okCode: "AMOUNT_KIND_MISMATCH"},
		{name: "payment frequency cadence", caller: owner, method: http.MethodPost, path: "/api/payment-frequencies",
			body: map[string]any{"name": "Every day", "cadence": "DAILY"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Every week", "cadence": "WEEKLY"}, okStatus: 201},
		{name: "department has no cadence", caller: owner, method: http.MethodPost, path: "/api/departments",
			body: map[string]any{"name": "Weekly team", "cadence": "WEEKLY"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Weekly team"}, okStatus: 201},
		{name: "allowance update needs a field", caller: owner, method: http.MethodPut, path: "/api/allowances/" + allowanceA,
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"active": true}, okStatus: 200},

		// Catalog codes and names.
		{name: "department code characters", caller: owner, method: http.MethodPost, path: "/api/departments",
			body: map[string]any{"name": "Finance", "code": "FIN 1"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Finance", "code": "FIN-1.a:b_c"}, okStatus: 201},
		{name: "allowance code characters", caller: owner, method: http.MethodPost, path: "/api/allowances",
			body:   map[string]any{"name": "Transport", "code": "TR/1", "kind": "FIXED_SANTIM", "amountSantim": 1},
			status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"name": "Transport", "code": "TR_1", "kind": "FIXED_SANTIM", "amountSantim": 1}, okStatus: 201},
		{name: "department name not blank", caller: owner, method: http.MethodPost, path: "/api/departments",
			body: map[string]any{"name": " \t "}, status: 400, code: "INVALID_REQUEST"},
		{name: "department update needs a field", caller: owner, method: http.MethodPut, path: "/api/departments/" + department,
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"description": ""}, okStatus: 200},

		// Path ids are identifiers (the webhook id a positive integer).
		{name: "admins path id", caller: platform, method: http.MethodPost, path: "/api/business/" + tenant + "/admins/mem!1/suspend",
			status: 400, code: "INVALID_REQUEST",
			okPath: "/api/business/" + tenant + "/admins/" + adminMemberID + "/suspend", okStatus: 200},
		{name: "admins organization id", caller: platform, method: http.MethodGet, path: "/api/business/org!1/admins",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/business/org_unknown/admins", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "team-member path id", caller: owner, method: http.MethodGet, path: "/api/business/" + tenant + "/team-members/mem!1",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/business/" + tenant + "/team-members/mem_unknown", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "catalog path id", caller: owner, method: http.MethodDelete, path: "/api/positions/pos!1",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/positions/pos_unknown", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "assignment path id", caller: owner, method: http.MethodDelete, path: "/api/employees/" + employee + "/allowances/asg!1",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/employees/" + employee + "/allowances/asg_unknown", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "employee path id", caller: owner, method: http.MethodGet, path: "/api/employees/emp!1/deductions",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/employees/emp_unknown/deductions", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "member path id", caller: owner, method: http.MethodGet, path: "/api/members/usr!1",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/members/usr_unknown", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "kyc path id", caller: platform, method: http.MethodPost, path: "/api/kyc/kyc!1/claim",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/kyc/kyc_unknown/claim", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "webhook id is a number", caller: platform, method: http.MethodGet, path: "/api/integration/webhooks/abc",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/integration/webhooks/9007", okStatus: 404, okCode: "NOT_FOUND"},
		{name: "webhook id is positive", caller: platform, method: http.MethodGet, path: "/api/integration/webhooks/0",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/integration/webhooks/007", okStatus: 404, okCode: "NOT_FOUND"},

		// Query parameters: page cursors and filters are identifiers (a stored callback's and a
		// sanctions check's cursor a plainly written number), list texts are not blank.
		{name: "employee list cursor", caller: owner, method: http.MethodGet, path: "/api/employees?cursor=emp%201",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/employees?cursor=emp_1", okStatus: 200},
		{name: "employee list name filter", caller: owner, method: http.MethodGet, path: "/api/employees?q=%20%20",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/employees?q=%20Abebe", okStatus: 200},
		{name: "webhook list cursor", caller: platform, method: http.MethodGet, path: "/api/integration/webhooks?cursor=01",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/integration/webhooks?cursor=1", okStatus: 200},
		{name: "webhook list partner", caller: platform, method: http.MethodGet, path: "/api/integration/webhooks?partner=a%20b",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/integration/webhooks?partner=sandbox", okStatus: 200},
		{name: "full organization id", caller: owner, method: http.MethodGet, path: "/api/auth/organization/get-full-organization?organizationId=org%2F1",
			status: 400, code: "INVALID_REQUEST", okPath: "/api/auth/organization/get-full-organization?organizationId=" + tenant, okStatus: 200},

		// E-mail addresses and E.164 numbers.
		{name: "forget-password e-mail", caller: f.client(), method: http.MethodPost, path: "/api/auth/forget-password",
			body: map[string]any{"email": "nobody@example..et"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"email": "nobody@example.et"}, okStatus: 200},
		{name: "sign-up e-mail", caller: f.client(), method: http.MethodPost, path: "/api/auth/sign-up/email",
			body: map[string]any{"email": "new user@example.et", "password": testPassword, "name": "New User",
				"organization": map[string]any{"name": "New Org", "kind": "BUSINESS"}}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"email": "new.user+x@example.et", "password": testPassword, "name": "New User",
				"organization": map[string]any{"name": "New Org", "kind": "BUSINESS"}}, okStatus: 201},
		{name: "team invite e-mail", caller: owner, method: http.MethodPost, path: "/api/business/" + tenant + "/team-members",
			body: map[string]any{"email": "clerk@example", "name": "Clerk", "role": "member"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"email": "clerk@example.et", "name": "Clerk", "role": "member"}, okStatus: 201},
		{name: "business admin e-mail", caller: platform, method: http.MethodPost, path: "/api/business/" + tenant + "/admins",
			body: map[string]any{"email": "<boss@example.et>", "name": "Boss", "role": "admin"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"email": "boss@example.et", "name": "Boss", "role": "admin"}, okStatus: 201},
		{name: "invite-member e-mail", caller: owner, method: http.MethodPost, path: "/api/auth/organization/invite-member",
			body: map[string]any{"organizationId": tenant, "email": "a@b@example.et", "role": "member"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"organizationId": tenant, "email": "invitee@example.et", "role": "member"}, okStatus: 201},
		{name: "employee e-mail", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: merge(employeeBody("EMAIL0001"), map[string]any{"email": "tsehay@"}), status: 400, code: "INVALID_REQUEST",
			okBody: merge(employeeBody("EMAIL0001"), map[string]any{"email": ""}), okStatus: 201},
		{name: "send-otp E.164", caller: owner, method: http.MethodPost, path: "/api/auth/phone-number/send-otp",
			body: map[string]any{"phoneNumber": "+2519112345678901"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"phoneNumber": "+251911234567"}, okStatus: 200},
		{name: "employee phone E.164", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: merge(employeeBody("PHONE0001"), map[string]any{"phone": "0911234567"}), status: 400, code: "INVALID_REQUEST",
			okBody: merge(employeeBody("PHONE0001"), map[string]any{"phone": " +251911234567 "}), okStatus: 201},

		// TIN: 10 digits; a termination date: YYYY-MM-DD in 1900 to 2200, or "".
		{name: "employee TIN is 10 digits", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: merge(employeeBody("TIN00001"), map[string]any{"tin": "012345678"}), status: 400, code: "INVALID_REQUEST",
			okBody: merge(employeeBody("TIN00001"), map[string]any{"tin": "0123456789"}), okStatus: 201},
		{name: "employee TIN has no separators", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: merge(employeeBody("TIN00002"), map[string]any{"tin": "01234-56789"}), status: 400, code: "INVALID_REQUEST",
			okBody: merge(employeeBody("TIN00002"), map[string]any{"tin": ""}), okStatus: 201},
		{name: "employee termination date shape", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: merge(employeeBody("LEFT0001"), map[string]any{"terminationDate": "2025/03/01"}), status: 400, code: "INVALID_REQUEST",
			okBody: merge(employeeBody("LEFT0001"), map[string]any{"terminationDate": "2025-02-01"}), okStatus: 201},
		{name: "employee termination date year", caller: owner, method: http.MethodPut, path: "/api/employees/" + employee,
			body: map[string]any{"terminationDate": "2201-01-01"}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"terminationDate": ""}, okStatus: 200},

		// National ids: 6 to 32 letters and digits once spaces and hyphens are gone.
		{name: "employee national id too short", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: employeeBody("AB-12 3"), status: 400, code: "INVALID_REQUEST",
			okBody: employeeBody("ab-12 34"), okStatus: 201},
		{name: "employee national id too long", caller: owner, method: http.MethodPost, path: "/api/employees",
			body: employeeBody(strings.Repeat("9", 33)), status: 400, code: "INVALID_REQUEST",
			okBody: employeeBody(strings.Repeat("8", 32)), okStatus: 201},
		{name: "kyc national id", caller: owner, method: http.MethodPost, path: "/api/kyc",
			body: kycBody("ID_0001", "1990-05-17"), status: 400, code: "INVALID_REQUEST",
			okBody: kycBody("ID-00001", "1990-05-17"), okStatus: 400, okCode: "KYC_DOCUMENT_NOT_FOUND"},
		{name: "kyc date of birth after 1900", caller: owner, method: http.MethodPost, path: "/api/kyc",
			body: kycBody("ID00001", "1899-12-31"), status: 400, code: "INVALID_REQUEST",
			okBody: kycBody("ID00001", "1900-01-01"), okStatus: 400, okCode: "KYC_DOCUMENT_NOT_FOUND"},
		{name: "kyc photo is an upload key", caller: owner, method: http.MethodPost, path: "/api/kyc",
			body:   merge(kycBody("ID00001", "1990-05-17"), map[string]any{"photoKey": "upl_0190A0B0-0000-7000-8000-000000000001"}),
			status: 400, code: "INVALID_REQUEST"},
		{name: "employee update needs a field", caller: owner, method: http.MethodPut, path: "/api/employees/" + employee,
			body: map[string]any{"businessId": ""}, status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"businessId": "", "position": "Clerk"}, okStatus: 200},

		// EWA repayment: ewaRequestId is an identifier (that it equals the path's id is stated in
		// words: TestDocumentNamesRulesNoSchemaStates).
		{name: "ewaRequestId is an identifier", caller: owner, method: http.MethodPost, path: repay, hdr: idem,
			body:   map[string]any{"ewaRequestId": "ewa unknown", "repaidAmountSantim": 100, "source": "PAYROLL"},
			status: 400, code: "INVALID_REQUEST"},

		// Upload parts: one of the four types.
		{name: "upload part type", caller: owner, method: http.MethodPost, path: "/api/uploads", body: badUpload, hdr: badUploadHdr,
			status: 415, code: "UNSUPPORTED_MEDIA_TYPE", okBody: okUpload, okHdr: okUploadHdr, okStatus: 201},

		// The import file's header: documented column names only.
		{name: "import header", caller: owner, method: http.MethodPost, path: importPath,
			body: []byte(strings.Replace(csvHeader, "firstName", "firstname", 1) + "\n" + csvRow + "\n"), hdr: []string{"Content-Type", "text/csv"},
			status: 400, code: "IMPORT_INVALID_HEADER",
			okBody: []byte("\uFEFF" + csvHeader + "\n" + csvRow + "\n"), okHdr: []string{"Content-Type", "text/csv"}, okStatus: 200},
		{name: "import needs a row", caller: owner, method: http.MethodPost, path: importPath,
			body: []byte(csvHeader + "\n"), hdr: []string{"Content-Type", "text/csv"}, status: 400, code: "IMPORT_EMPTY"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.caller.clone()
			a.t = t
			require.Error(t, a.documentVerdict(tc.method, tc.path, tc.body, tc.hdr...), "the document must refuse what the server refuses")
			rec := a.hostile(tc.method, tc.path, tc.body, tc.hdr...)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, tc.code, errCode(rec), rec.Body.String())
			if tc.okStatus == 0 {
				return
			}
			path := tc.path
			if tc.okPath != "" {
				path = tc.okPath
			}
			rec = a.call(tc.method, path, tc.okBody, tc.okHdr...)
			require.Equal(t, tc.okStatus, rec.Code, "the allowed boundary: %s", rec.Body.String())
			require.Equal(t, tc.okCode, errCode(rec), rec.Body.String())
		})
	}
}

// merge is base with the fields of over (a copy).
func merge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// TestDocumentNamesRulesNoSchemaStates: the rules a schema cannot state are named in their
// operation's words, and the refusal they cause is a declared response.
func TestDocumentNamesRulesNoSchemaStates(t *testing.T) {
	t.Parallel()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapiYAML)
	require.NoError(t, err)
	for _, r := range []struct {
		path, method, status, words string
	}{
		{"/api/ewa/requests/{id}/record-repayment", http.MethodPost, "400", "must equal the path's id"},
		{"/api/kyc", http.MethodPost, "400", "more than 14 years before today"},
		{"/api/sanctions/screen", http.MethodPost, "400", "from 1900-01-01 to today"},
		{"/api/employees/{id}/allowances", http.MethodPost, "422", "the stored definition's kind decides"},
		{"/api/employees/{id}/deductions", http.MethodPost, "422", "the stored definition's kind decides"},
		{"/api/allowances/{id}", http.MethodPut, "422", "the stored kind decides"},
		{"/api/deductions/{id}", http.MethodPut, "422", "the stored kind decides"},
		{"/api/employees/bulk-import", http.MethodPost, "400", "each column appears at most once"},
		{"/api/employees/{id}", http.MethodPut, "400", "checked against the stored hireDate"},
		{"/api/uploads", http.MethodPost, "415", "a charset parameter is allowed on"},
		{"/api/fi/loans/{id}/approve", http.MethodPost, "422", "has withdrawn its opt-in to the loan's product"},
		{"/api/fi/loans/{id}/approve", http.MethodPost, "409", "LOAN_FI_NOT_AVAILABLE (the financial institution is not in good standing"},
		{"/api/loans/{id}/disburse", http.MethodPost, "422", "has withdrawn its opt-in to the loan's"},
	} {
		op := doc.Paths.Find(r.path).GetOperation(r.method)
		require.NotNil(t, op, "%s %s", r.method, r.path)
		require.NotNil(t, op.Responses.Value(r.status), "%s %s declares %s", r.method, r.path, r.status)
		// The words may be the operation's or its request schema's (where the field is described).
		text, err := op.MarshalJSON()
		require.NoError(t, err)
		if op.RequestBody != nil {
			for _, mt := range op.RequestBody.Value.Content {
				body, err := mt.Schema.Value.MarshalJSON()
				require.NoError(t, err)
				text = append(text, body...)
			}
		}
		require.Contains(t, strings.ReplaceAll(string(text), `\n`, " "), r.words, "%s %s", r.method, r.path)
	}
}

// TestDocumentFormatsAreTheFieldValidators: each shared format schema accepts exactly what its
// handler-side check (after the handler's normalisation) accepts, over hand-picked edge cases and
// random strings from an alphabet that reaches every branch of the patterns.
func TestDocumentFormatsAreTheFieldValidators(t *testing.T) {
	t.Parallel()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapiYAML)
	require.NoError(t, err)
	schema := func(name string) *openapi3.Schema {
		s := doc.Components.Schemas[name]
		require.NotNil(t, s, name)
		return s.Value
	}
	// optional is how the handlers read an optional field: normalise, then "" clears it.
	optional := func(norm func(string) string, check func(string, string) error) func(string) error {
		return func(v string) error {
			if v = norm(v); v == "" {
				return nil
			}
			return check("f", v)
		}
	}
	email := func(v string) error { return field.Email("email", identity.NormalizeEmail(v)) }
	phone := func(v string) error { return field.Phone("phone", v) }
	formats := []struct {
		schema  string
		handler func(string) error
		samples []string
	}{
		{"Identifier", func(v string) error { return field.Identifier("id", v, 0) },
			[]string{"", "a", "emp_0190a0b0-0000-7000-8000-000000000001", "a b", "a/b", "ü", strings.Repeat("x", 128), strings.Repeat("x", 129)}},
		{"EmailAddress", email,
			[]string{"a@b.et", " A@B.ET\t", "a@b", "a@b..et", "a@.b.et", "a@b.et.", "@b.et", "a@@b.et", "a b@c.et", "\"a\"@b.et",
				"a@b.et,c@d.et", "<a@b.et>", "a\\b@c.et", "a[1]@b.et", "ü@b.et", "a@b.et\u00a0", "\u2003a@b.et", "a:b@c.et",
				strings.Repeat("l", 64) + "@x.et", strings.Repeat("l", 65) + "@x.et", "a@" + strings.Repeat("d", 249) + ".et", "a@" + strings.Repeat("d", 248) + ".et"}},
		{"OptionalEmailAddress", optional(identity.NormalizeEmail, field.Email), []string{"", "   ", " A@B.ET ", "a@b"}},
		{"PhoneE164", phone,
			[]string{"+1234567", "+123456", "+251911234567", "+123456789012345", "+1234567890123456", "+0911234567", "251911234567", " +251911234567", "+25191123456a"}},
		{"OptionalPhoneE164", optional(strings.TrimSpace, field.Phone), []string{"", " ", " +251911234567\n", "+0911234567", "+1234567", "+123456"}},
		{"NationalId", func(v string) error { return employees.ValidNationalID("nationalId", employees.NormalizeNationalID(v)) },
			[]string{"AB1234", "ab-12 34", " -AB1234- ", "AB123", "AB_1234", "AB\t1234", "\tAB1234\n", strings.Repeat("9", 32), strings.Repeat("9", 33),
				"12-34-56-78-90-12-34-56-78-90-12-34-56-78-90-12", "ÄB1234", "AB1234\u00a0"}},
	}
	rng := rand.New(rand.NewPCG(21, 5))
	alphabet := []rune("aZ09+-_.:@ \t\"<,;/\\\u00a0ü")
	for _, fm := range formats {
		s := schema(fm.schema)
		samples := fm.samples
		for i := 0; i < 3000; i++ {
			n := rng.IntN(24)
			var b strings.Builder
			if fm.schema == "EmailAddress" && rng.IntN(2) == 0 {
				b.WriteString("ab@cd.e")
			}
			for j := 0; j < n; j++ {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
			samples = append(samples, b.String())
		}
		for _, v := range samples {
			docOK := s.VisitJSON(v) == nil
			handlerOK := fm.handler(v) == nil
			require.Equal(t, handlerOK, docOK, "%s: %q (document %v, handler %v)", fm.schema, v, docOK, handlerOK)
		}
	}
}
