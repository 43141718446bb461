//go:build !noembed

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// The demo `wagerail dev` seeds (unless --no-demo): a platform admin, a business with its owner,
// three employees (KYC approved; KYC pending; KYC approved but paid to an account the bank does
// not have) and the business's EWA settings, so a newcomer can request and disburse an advance
// at once (README, "Try it: an early wage advance"). It acts as a client of the running API over
// HTTP wherever a route exists, so every step passes the validation and leaves the audit trail a
// user's would; the platform admin comes from create-platform-admin's code path, and the
// sanctions sample lists from the ingest's. Each step first looks at what is there, so a run that
// stopped half-way is finished by the next; once complete, later runs change nothing.

// Demo identities. The passwords are generated on the first run and kept in the data dir's
// credentials.json (0600), never fixed.
const (
	demoAdminEmail   = "admin@demo.wagerail.test"
	demoAdminName    = "Demo platform admin"
	demoOwnerEmail   = "owner@demo.wagerail.test"
	demoOwnerName    = "Meron Haile"
	demoBusinessName = "Abay Textiles PLC"
	// demoFundingAccount is the sandbox account the business's advances are paid from: the
	// seeded "Wagerail EWA Float" (sandbox.DemoAccounts).
	demoFundingAccount = "1000000000401"
	demoPartner        = "sandbox"
)

// demoEmployee is one seeded employee and the KYC state the demo leaves them in.
type demoEmployee struct {
	Key                       string // the name of its id in demoCredentials.Employees
	First, Last               string
	Email, NationalID, Born   string
	TIN                       string // the taxpayer number the payroll tax report names
	Department, Position      string
	Account                   string // payout account at the sandbox
	SalarySantim              int64  // gross monthly
	ApproveKyc                bool   // else the submission is left PENDING
	AccountMissingFromSandbox bool   // documents that Account is deliberately not opened
}

var demoEmployees = []demoEmployee{
	{Key: "kycApproved", First: "Almaz", Last: "Tesfaye", Email: "almaz.tesfaye@demo.wagerail.test", NationalID: "DEMO0000101", TIN: "0000000101",
		Born: "1994-03-12", Department: "Weaving", Position: "Loom operator", Account: "1000000000101", SalarySantim: 18_000_00, ApproveKyc: true},
	{Key: "kycPending", First: "Dawit", Last: "Bekele", Email: "dawit.bekele@demo.wagerail.test", NationalID: "DEMO0000102", TIN: "0000000102",
		Born: "1990-11-02", Department: "Dyeing", Position: "Dye house technician", Account: "1000000000102", SalarySantim: 15_000_00},
	{Key: "badAccount", First: "Hirut", Last: "Alemu", Email: "hirut.alemu@demo.wagerail.test", NationalID: "DEMO0000103", TIN: "0000000103",
		Born: "1988-07-21", Department: "Finishing", Position: "Quality inspector", Account: "1000000000199", SalarySantim: 21_000_00,
		ApproveKyc: true, AccountMissingFromSandbox: true},
}

// demoEwaSettings is the business's EWA settings: paid from the float, half of earned wages,
// 5 ETB + 1 % per advance, holder names not compared.
var demoEwaSettings = map[string]any{
	"fundingAccount":   map[string]string{"partner": demoPartner, "accountNumber": demoFundingAccount},
	"accessCapPercent": 50, "feeFlatSantim": 500, "feeBasisPoints": 100, "accountNameMatch": false,
}

// demoEnv is what the seed needs from the running stack.
type demoEnv struct {
	APIURL      string // http://host:port
	AppDSN      string
	PlatformDSN string
	CredsPath   string
	// DevInbox is the dev inbox's file ("" when e-mail goes to SMTP: the payroll approver, who
	// sets a password from a mailed link, is then left out).
	DevInbox string
	// Creds is the stack's credentials; the seed fills in Creds.Demo and saves the file after
	// every step that made something.
	Creds *devCredentials
}

// seedDemo brings the demo to its complete state and returns its credentials. A complete demo
// whose owner still exists is left alone: no request, no audit row.
func seedDemo(ctx context.Context, env demoEnv) (*demoCredentials, error) {
	if env.PlatformDSN == "" {
		return nil, errors.New("the demo needs the cross-tenant role (set DATABASE_PLATFORM_URL, or --no-demo)")
	}
	if env.Creds.Demo == nil {
		env.Creds.Demo = &demoCredentials{AdminEmail: demoAdminEmail, AdminPassword: randomToken(),
			OwnerEmail: demoOwnerEmail, OwnerPassword: randomToken(), FundingAccount: demoFundingAccount}
		// Saved before use: a run that stops half-way finishes with the same passwords.
		if err := saveCredentials(env.CredsPath, *env.Creds); err != nil {
			return nil, err
		}
	}
	app, err := openRuntimeDB(ctx, "demo", env.AppDSN, 2)
	if err != nil {
		return nil, err
	}
	defer app.Close()
	s := &demoSeed{env: env, d: env.Creds.Demo, app: app}
	if s.d.Complete {
		_, err := identity.UserByEmail(ctx, app, s.d.OwnerEmail)
		if err == nil {
			return s.d, s.parts(ctx)
		}
		if !errors.Is(err, identity.ErrNotFound) {
			return nil, err
		}
		// The database was replaced under the data dir's credentials: seed again.
		s.d.Complete, s.d.EwaSettingsSet, s.d.BusinessID, s.d.Employees = false, false, "", nil
		s.d.LendingComplete, s.d.FIID, s.d.LoanProductID = false, "", ""
		s.d.PayrollComplete, s.d.EmployeeLoginComplete = false, false
	}
	for _, step := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"sanctions sample lists", s.sanctionLists},
		{"platform admin", s.platformAdmin},
		{"business owner", s.ownerAccount},
		{"catalogs", s.catalogs},
		{"employees", s.employees},
		{"KYC", s.kyc},
		{"EWA settings", s.ewaSettings},
	} {
		if err := step.run(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", step.name, err)
		}
	}
	s.d.Complete = true
	if err := s.save(); err != nil {
		return nil, err
	}
	return s.d, s.parts(ctx)
}

// parts brings the parts seeded after the core to their complete state: lending, payroll, then
// the employee's login.
func (s *demoSeed) parts(ctx context.Context) error {
	if err := s.lending(ctx); err != nil {
		return err
	}
	if err := s.payroll(ctx); err != nil {
		return fmt.Errorf("payroll approver: %w", err)
	}
	if err := s.employeeLogin(ctx); err != nil {
		return fmt.Errorf("employee login: %w", err)
	}
	return nil
}

type demoSeed struct {
	env demoEnv
	d   *demoCredentials
	app *pgxpool.Pool
	// admin, owner and lender are signed-in API clients, made when a step first needs one.
	admin, owner, lender *demoClient
}

func (s *demoSeed) save() error { return saveCredentials(s.env.CredsPath, *s.env.Creds) }

// sanctionLists ingests the sample lists of each source that has no active version, as
// `wagerail sanctions ingest` does, so KYC approval and the disburse saga's sanctions gate screen
// the demo names against real (if small) lists — they come out CLEAR. A source with a version
// (a real list ingested by hand) is left alone; lists normalised by older matching rules are
// renormalised and their subjects re-screened (sanctions.Rescreen), or screening would refuse.
func (s *demoSeed) sanctionLists(ctx context.Context) error {
	active, err := sanctions.ActiveVersions(ctx, s.app)
	if err != nil {
		return err
	}
	have := map[sanctions.Source]bool{}
	outdated := false
	for _, v := range active {
		have[v.Source] = true
		outdated = outdated || v.NormalizerVersion < sanctions.NormalizerVersion
	}
	var missing []sanctions.Source
	for _, src := range sanctions.SampleSources {
		if !have[src] {
			missing = append(missing, src)
		}
	}
	if len(missing) == 0 && !outdated {
		return nil
	}
	pool, err := openRuntimeDB(ctx, "demo", s.env.PlatformDSN, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	ctx = tenancy.WithActor(ctx, sanctions.IngestActor)
	for _, src := range missing {
		files, err := sanctions.SampleFiles(src)
		if err != nil {
			return err
		}
		if _, err := sanctions.Ingest(ctx, pool, src, sanctions.IngestOptions{}, files...); err != nil {
			return platformError("ingest "+string(src), err)
		}
	}
	if _, err := sanctions.Rescreen(ctx, pool); err != nil {
		return platformError("rescreen", err)
	}
	return nil
}

// platformAdmin makes the demo admin through create-platform-admin's code path and, when that
// printed a set-up link (a new user, or one that never chose a password), sets the generated
// password with the link's token over the API, as the portal's set-up page would. An admin that
// exists with a password is left alone.
func (s *demoSeed) platformAdmin(ctx context.Context) error {
	u, err := identity.UserByEmail(ctx, s.app, s.d.AdminEmail)
	switch {
	case err == nil && u.PasswordHash != "":
		admin, err := identity.IsPlatformAdmin(ctx, s.app, u.ID)
		if err != nil || admin {
			return err
		}
	case err != nil && !errors.Is(err, identity.ErrNotFound):
		return err
	}
	var out bytes.Buffer
	err = runCreatePlatformAdmin(ctx, adminConfig{DatabasePlatformURL: s.env.PlatformDSN, Email: s.d.AdminEmail,
		Name: demoAdminName, PublicURL: s.env.APIURL}, &out, time.Now())
	if err != nil {
		return err
	}
	var rep platformAdminReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("create-platform-admin report: %w", err)
	}
	if rep.SetupLink == "" {
		return nil
	}
	link, err := url.Parse(rep.SetupLink)
	if err != nil {
		return fmt.Errorf("create-platform-admin set-up link: %w", err)
	}
	c := newDemoClient(s.env.APIURL)
	return c.call(ctx, http.MethodPost, "/api/auth/reset-password",
		map[string]string{"token": link.Query().Get("token"), "newPassword": s.d.AdminPassword}, http.StatusOK, nil)
}

// owner signs the business owner up (which creates the business organization) or, when the
// account exists, makes sure the organization is known.
func (s *demoSeed) ownerAccount(ctx context.Context) error {
	_, err := identity.UserByEmail(ctx, s.app, s.d.OwnerEmail)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		c := newDemoClient(s.env.APIURL)
		var res struct {
			Organization struct {
				ID string `json:"id"`
			} `json:"organization"`
		}
		if err := c.call(ctx, http.MethodPost, "/api/auth/sign-up/email", map[string]any{
			"email": s.d.OwnerEmail, "password": s.d.OwnerPassword, "name": demoOwnerName,
			"organization": map[string]string{"name": demoBusinessName, "kind": "BUSINESS"},
		}, http.StatusCreated, &res); err != nil {
			return err
		}
		s.owner, s.d.BusinessID = c, res.Organization.ID
		return s.save()
	case err != nil:
		return err
	case s.d.BusinessID != "":
		return nil
	}
	c, err := s.ownerClient(ctx)
	if err != nil {
		return err
	}
	var sess struct {
		Session struct {
			ActiveOrganizationID string `json:"activeOrganizationId"`
		} `json:"session"`
	}
	if err := c.call(ctx, http.MethodGet, "/api/auth/get-session", nil, http.StatusOK, &sess); err != nil {
		return err
	}
	if sess.Session.ActiveOrganizationID == "" {
		return errors.New("the demo owner belongs to no organization")
	}
	s.d.BusinessID = sess.Session.ActiveOrganizationID
	return s.save()
}

// The employment type and payment frequency every demo employee has: an employee's must be
// entries of the employer's catalogs. The payment frequency is paid monthly.
const (
	demoEmploymentType   = "Full time"
	demoPaymentFrequency = "Monthly"
	demoPayCadence       = catalogs.Monthly
)

// catalogs adds, through the API as an owner would, the catalog entries the demo employees name
// and the business does not have yet.
func (s *demoSeed) catalogs(ctx context.Context) error {
	for _, want := range []struct {
		catalog *catalogs.Catalog
		path    string
		name    string
		body    map[string]any
	}{
		{catalogs.EmploymentTypes, "/api/employment-types", demoEmploymentType, map[string]any{"name": demoEmploymentType}},
		{catalogs.PaymentFrequencies, "/api/payment-frequencies", demoPaymentFrequency,
			map[string]any{"name": demoPaymentFrequency, "cadence": demoPayCadence}},
	} {
		var have map[string]string
		if err := s.inBusiness(ctx, func(tx pgx.Tx) error {
			var err error
			have, err = want.catalog.Resolve(tenancy.WithTenant(ctx, s.d.BusinessID), tx, []string{want.name})
			return err
		}); err != nil {
			return err
		}
		if _, ok := have[want.name]; ok {
			continue
		}
		c, err := s.ownerClient(ctx)
		if err != nil {
			return err
		}
		if err := c.call(ctx, http.MethodPost, want.path, want.body, http.StatusCreated, nil); err != nil {
			return fmt.Errorf("%s: %w", want.name, err)
		}
	}
	return nil
}

// employees adds the demo employees the business does not have yet (matched by national id).
func (s *demoSeed) employees(ctx context.Context) error {
	have := map[string]string{}
	if err := s.inBusiness(ctx, func(tx pgx.Tx) error {
		for after := ""; ; {
			page, err := employees.List(ctx, tx, s.d.BusinessID, employees.Filter{After: after, Limit: employees.MaxPage})
			if err != nil {
				return err
			}
			for _, e := range page {
				have[e.NationalID] = e.ID
			}
			if len(page) < employees.MaxPage {
				return nil
			}
			after = page[len(page)-1].ID
		}
	}); err != nil {
		return err
	}
	if s.d.Employees == nil {
		s.d.Employees = map[string]string{}
	}
	for _, e := range demoEmployees {
		if id, ok := have[e.NationalID]; ok {
			s.d.Employees[e.Key] = id
			continue
		}
		c, err := s.ownerClient(ctx)
		if err != nil {
			return err
		}
		var res struct {
			ID string `json:"id"`
		}
		if err := c.call(ctx, http.MethodPost, "/api/employees", map[string]any{
			"firstName": e.First, "lastName": e.Last, "email": e.Email, "nationalId": e.NationalID, "tin": e.TIN,
			"department": e.Department, "position": e.Position, "employmentType": demoEmploymentType, "paymentFrequency": demoPaymentFrequency,
			"hireDate": "2023-09-01", "grossMonthlySalarySantim": e.SalarySantim,
			"payoutAccount": map[string]string{"partner": demoPartner, "accountNumber": e.Account, "holderName": e.First + " " + e.Last},
		}, http.StatusCreated, &res); err != nil {
			return fmt.Errorf("%s %s: %w", e.First, e.Last, err)
		}
		s.d.Employees[e.Key] = res.ID
		if err := s.save(); err != nil {
			return err
		}
	}
	return s.save()
}

// kyc submits each employee's KYC as the owner (a photo and a national id document, uploaded
// first) and, for those the demo approves, claims and approves it as the platform admin — the
// approval screens the name against the sample lists.
func (s *demoSeed) kyc(ctx context.Context) error {
	for _, e := range demoEmployees {
		id := s.d.Employees[e.Key]
		var latest kyc.Submission
		err := s.inBusiness(ctx, func(tx pgx.Tx) error {
			var err error
			latest, err = kyc.Latest(ctx, tx, s.d.BusinessID, kyc.SubjectEmployee, id)
			return err
		})
		switch {
		case errors.Is(err, kyc.ErrNotFound):
			if latest, err = s.submitKyc(ctx, e, id); err != nil {
				return fmt.Errorf("%s %s: %w", e.First, e.Last, err)
			}
		case err != nil:
			return err
		}
		if !e.ApproveKyc || latest.Status == kyc.Approved {
			continue
		}
		if err := s.approveKyc(ctx, latest); err != nil {
			return fmt.Errorf("%s %s: %w", e.First, e.Last, err)
		}
	}
	return nil
}

func (s *demoSeed) submitKyc(ctx context.Context, e demoEmployee, employeeID string) (kyc.Submission, error) {
	c, err := s.ownerClient(ctx)
	if err != nil {
		return kyc.Submission{}, err
	}
	photo, err := c.upload(ctx, "photo.png", "image/png", demoPhoto())
	if err != nil {
		return kyc.Submission{}, err
	}
	doc, err := c.upload(ctx, "national-id.pdf", "application/pdf", demoIDDocument(e))
	if err != nil {
		return kyc.Submission{}, err
	}
	var res struct {
		ID     string     `json:"id"`
		Status kyc.Status `json:"status"`
	}
	if err := c.call(ctx, http.MethodPost, "/api/kyc", map[string]any{
		"employeeId": employeeID, "fullName": e.First + " " + e.Last, "nationalId": e.NationalID, "dateOfBirth": e.Born,
		"photoKey": photo, "documents": []map[string]string{{"type": "national_id", "uploadKey": doc}},
	}, http.StatusCreated, &res); err != nil {
		return kyc.Submission{}, err
	}
	return kyc.Submission{ID: res.ID, Status: res.Status}, nil
}

func (s *demoSeed) approveKyc(ctx context.Context, sub kyc.Submission) error {
	c, err := s.adminClient(ctx)
	if err != nil {
		return err
	}
	switch sub.Status {
	case kyc.Pending:
		if err := c.call(ctx, http.MethodPost, "/api/kyc/"+sub.ID+"/claim", nil, http.StatusOK, nil); err != nil {
			return err
		}
	case kyc.InReview:
	default:
		return fmt.Errorf("KYC submission %s is %s; the demo cannot approve it", sub.ID, sub.Status)
	}
	return c.call(ctx, http.MethodPost, "/api/kyc/"+sub.ID+"/approve", nil, http.StatusOK, nil)
}

// ewaSettings sets the business's EWA settings once.
func (s *demoSeed) ewaSettings(ctx context.Context) error {
	if s.d.EwaSettingsSet {
		return nil
	}
	c, err := s.ownerClient(ctx)
	if err != nil {
		return err
	}
	if err := c.call(ctx, http.MethodPut, "/api/ewa/settings", demoEwaSettings, anySuccess, nil); err != nil {
		return err
	}
	s.d.EwaSettingsSet = true
	return s.save()
}

// inBusiness runs fn in a read transaction scoped to the demo business, as the runtime role.
func (s *demoSeed) inBusiness(ctx context.Context, fn func(pgx.Tx) error) error {
	if s.d.BusinessID == "" {
		return errors.New("no demo business")
	}
	return tenancy.InTx(tenancy.WithTenant(ctx, s.d.BusinessID), s.app, fn)
}

func (s *demoSeed) ownerClient(ctx context.Context) (*demoClient, error) {
	if s.owner == nil {
		c, err := signedIn(ctx, s.env.APIURL, s.d.OwnerEmail, s.d.OwnerPassword)
		if err != nil {
			return nil, fmt.Errorf("sign in as the demo owner: %w", err)
		}
		s.owner = c
	}
	return s.owner, nil
}

func (s *demoSeed) adminClient(ctx context.Context) (*demoClient, error) {
	if s.admin == nil {
		c, err := signedIn(ctx, s.env.APIURL, s.d.AdminEmail, s.d.AdminPassword)
		if err != nil {
			return nil, fmt.Errorf("sign in as the demo platform admin: %w", err)
		}
		s.admin = c
	}
	return s.admin, nil
}

// demoClient is an API client with its own cookie jar (one session).
type demoClient struct {
	base string
	hc   *http.Client
}

func newDemoClient(base string) *demoClient {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &demoClient{base: base, hc: &http.Client{Jar: jar, Timeout: time.Minute}}
}

func signedIn(ctx context.Context, base, email, password string) (*demoClient, error) {
	c := newDemoClient(base)
	var res struct {
		TwoFactorRedirect bool `json:"twoFactorRedirect"`
	}
	if err := c.call(ctx, http.MethodPost, "/api/auth/sign-in/email", map[string]string{"email": email, "password": password}, http.StatusOK, &res); err != nil {
		return nil, err
	}
	if res.TwoFactorRedirect {
		return nil, errors.New("two-factor authentication was turned on for this account")
	}
	return c, nil
}

// anySuccess as call's want takes any 2xx answer.
const anySuccess = 0

// call sends body (JSON, nil for none) and decodes a want answer into out (nil: discarded); any
// other status is an error naming the API's code and message.
func (c *demoClient) call(ctx context.Context, method, path string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.do(req, want, out)
}

func (c *demoClient) do(req *http.Request, want int, out any) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode != want && !(want == anySuccess && resp.StatusCode/100 == 2) {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
			return &demoAPIError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
		}
		text := strings.TrimSpace(string(b))
		if text == "" {
			text = http.StatusText(resp.StatusCode)
		}
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, text)
	}
	if out == nil || len(b) == 0 && want == anySuccess {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// demoAPIError is an API answer with an error code the demo did not want.
type demoAPIError struct {
	Method, Path  string
	Status        int
	Code, Message string
}

func (e *demoAPIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// apiCode is err's API error code ("" for another error).
func apiCode(err error) string {
	var e *demoAPIError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// upload stores a file for the client's active organization and returns its key.
func (c *demoClient) upload(ctx context.Context, name, contentType string, data []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", contentType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	if _, err := part.Write(data); err != nil {
		return "", err
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/uploads", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var res struct {
		Key string `json:"key"`
	}
	if err := c.do(req, http.StatusCreated, &res); err != nil {
		return "", err
	}
	return res.Key, nil
}

// demoPhoto is a small grey PNG standing in for an applicant's photo.
func demoPhoto() []byte {
	img := image.NewGray(image.Rect(0, 0, 32, 32))
	for y := range 32 {
		for x := range 32 {
			img.SetGray(x, y, color.Gray{Y: uint8(96 + (x+y)%64)})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to memory does not fail
	return b.Bytes()
}

// demoIDDocument is a one-page PDF that says what it is: a demo stand-in for a national id.
func demoIDDocument(e demoEmployee) []byte {
	return demoPDF(fmt.Sprintf("Wagerail demo - not an identity document: %s %s, %s", e.First, e.Last, e.NationalID))
}

// demoPDF is a one-page PDF that says text.
func demoPDF(text string) []byte {
	stream := fmt.Sprintf("BT /F1 12 Tf 36 100 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// saveCredentials replaces path with c (0600), atomically.
func saveCredentials(path string, c devCredentials) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printDemo prints the demo's credentials and where the walk-through is, after the URLs.
func printDemo(w io.Writer, d *demoCredentials, credsPath string) {
	fmt.Fprintf(w, "\nDemo (--no-demo leaves it out; kept in %s, key \"demo\"):\n", credsPath)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  platform admin\t%s\tpassword %s\n", d.AdminEmail, d.AdminPassword)
	fmt.Fprintf(tw, "  business owner\t%s\tpassword %s\n", d.OwnerEmail, d.OwnerPassword)
	fmt.Fprintf(tw, "  business\t%s\t%s, EWA paid from sandbox account %s\n", d.BusinessID, demoBusinessName, d.FundingAccount)
	for _, e := range demoEmployees {
		state := "KYC PENDING"
		if e.ApproveKyc {
			state = "KYC APPROVED"
		}
		account := "pays to " + e.Account
		if e.AccountMissingFromSandbox {
			account += " (no such account at the sandbox)"
		}
		fmt.Fprintf(tw, "  employee\t%s\t%s %s, %s, %s\n", d.Employees[e.Key], e.First, e.Last, state, account)
	}
	if d.LendingComplete {
		fmt.Fprintf(tw, "  lender\t%s\tpassword %s\n", d.LenderEmail, d.LenderPassword)
		fmt.Fprintf(tw, "  financial institution\t%s\t%s, lends from %s, remittances to %s\n", d.FIID, demoFIName, demoFIFunding, demoFISettlement)
		fmt.Fprintf(tw, "  loan product\t%s\t%s, opted in to by %s\n", d.LoanProductID, demoLoanProduct["name"], demoBusinessName)
	}
	if d.PayrollComplete {
		fmt.Fprintf(tw, "  payroll approver\t%s\tpassword %s (a second admin of %s: approves what the owner calculates)\n",
			d.ApproverEmail, d.ApproverPassword, demoBusinessName)
	}
	if d.EmployeeLoginComplete {
		fmt.Fprintf(tw, "  employee login\t%s\tpassword %s (Almaz Tesfaye herself: her dashboard, settings, help and deductions)\n",
			d.EmployeeEmail, d.EmployeePassword)
	}
	tw.Flush()
	fmt.Fprintln(w, `Try it: README.md, "Try it: an early wage advance" (sign in, request, disburse, find the saga in the Temporal UI), "Try it: a salary-backed loan", "Try it: a payroll run" and "Try it: as the employee".`)
}
