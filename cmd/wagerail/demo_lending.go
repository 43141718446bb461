//go:build !noembed

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/wagerail/wagerail/internal/identity"
)

// The demo's lending part: a financial institution (its owner signed up with an organization of
// kind FI), verified by the platform admin, with its funding and settlement accounts at the
// sandbox and one loan product, the demo business opted in to it, and the business's payroll
// account set (remittances to the FI are paid from it). Like the rest of the demo it goes through the API as its users would, looks before it
// acts, and finishes on the next run what a run left half-done (README, "Try it: a salary-backed
// loan").

const (
	demoLenderEmail = "lender@demo.wagerail.test"
	demoLenderName  = "Selam Worku"
	demoFIName      = "Tana Microfinance S.C."
	// The FI's accounts at the sandbox (sandbox.DemoAccounts): loans are paid from the first,
	// remittances of repaid instalments go to the second.
	demoFIFunding    = "1000000000201"
	demoFISettlement = "1000000000202"
	// demoPayrollAccount is the business's payroll account (sandbox.DemoAccounts), the source of
	// its remittances to the FI.
	demoPayrollAccount = "1000000000001"
	demoPayrollHolder  = "Abay Textiles PLC Payroll"
)

// demoLoanProduct is the FI's product: 18 % a year, 3 to 12 months, 1,000 to 50,000 ETB, a 1 %
// fee, instalments at most a third of net pay.
var demoLoanProduct = map[string]any{"name": "Salary loan", "annualRateBasisPoints": 1800, "minTermMonths": 3,
	"maxTermMonths": 12, "minAmountSantim": 1_000_00, "maxAmountSantim": 50_000_00, "feeBasisPoints": 100,
	"maxDebtServiceBasisPoints": 3333}

// lending brings the lending part to its complete state (nothing when it is).
func (s *demoSeed) lending(ctx context.Context) error {
	if s.d.LendingComplete {
		return nil
	}
	if s.d.LenderEmail == "" {
		s.d.LenderEmail, s.d.LenderPassword = demoLenderEmail, randomToken()
		if err := s.save(); err != nil {
			return err
		}
	}
	for _, step := range []struct {
		name string
		run  func(context.Context, *demoClient) error
	}{
		{"financial institution review", s.fiReview},
		{"financial institution accounts", s.fiAccounts},
		{"loan product", s.loanProduct},
		{"loan product opt-in", s.loanOptIn},
		{"payroll account", s.payrollAccount},
	} {
		lender, err := s.lenderClient(ctx)
		if err != nil {
			return fmt.Errorf("financial institution: %w", err)
		}
		if err := step.run(ctx, lender); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	s.d.LendingComplete = true
	return s.save()
}

// lenderClient signs the FI's owner in, signing them up (which creates the FI) the first time.
func (s *demoSeed) lenderClient(ctx context.Context) (*demoClient, error) {
	if s.lender != nil {
		return s.lender, nil
	}
	_, err := identity.UserByEmail(ctx, s.app, s.d.LenderEmail)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		c := newDemoClient(s.env.APIURL)
		var res struct {
			Organization struct {
				ID string `json:"id"`
			} `json:"organization"`
		}
		if err := c.call(ctx, http.MethodPost, "/api/auth/sign-up/email", map[string]any{
			"email": s.d.LenderEmail, "password": s.d.LenderPassword, "name": demoLenderName,
			"organization": map[string]string{"name": demoFIName, "kind": "FI"},
		}, http.StatusCreated, &res); err != nil {
			return nil, err
		}
		s.lender, s.d.FIID = c, res.Organization.ID
		return c, s.save()
	case err != nil:
		return nil, err
	}
	c, err := signedIn(ctx, s.env.APIURL, s.d.LenderEmail, s.d.LenderPassword)
	if err != nil {
		return nil, fmt.Errorf("sign in as the demo lender: %w", err)
	}
	if s.d.FIID == "" {
		var sess struct {
			Session struct {
				ActiveOrganizationID string `json:"activeOrganizationId"`
			} `json:"session"`
		}
		if err := c.call(ctx, http.MethodGet, "/api/auth/get-session", nil, http.StatusOK, &sess); err != nil {
			return nil, err
		}
		if sess.Session.ActiveOrganizationID == "" {
			return nil, errors.New("the demo lender belongs to no organization")
		}
		s.d.FIID = sess.Session.ActiveOrganizationID
		if err := s.save(); err != nil {
			return nil, err
		}
	}
	s.lender = c
	return c, nil
}

// fiReview has the FI's owner upload its KYB documents and the platform admin file and verify
// them: an FI's products are on offer only once it is verified (internal/orgs standing.go).
func (s *demoSeed) fiReview(ctx context.Context, lender *demoClient) error {
	admin, err := s.adminClient(ctx)
	if err != nil {
		return err
	}
	base := "/api/financial-institutions/" + s.d.FIID
	var filed struct {
		Missing []string `json:"missing"`
	}
	if err := admin.call(ctx, http.MethodGet, base+"/documents", nil, http.StatusOK, &filed); err != nil {
		return err
	}
	for _, docType := range filed.Missing {
		data := demoPDF("Wagerail demo - not a real document: " + demoFIName + ", " + docType)
		key, err := lender.upload(ctx, docType+".pdf", "application/pdf", data)
		if err != nil {
			return err
		}
		if err := admin.call(ctx, http.MethodPut, base+"/documents/"+docType, map[string]any{"fileKey": key,
			"fileName": docType + ".pdf", "contentType": "application/pdf", "sizeBytes": len(data)}, http.StatusCreated, nil); err != nil {
			return err
		}
	}
	return admin.call(ctx, http.MethodPut, base+"/verify-kyc", map[string]string{"status": "VERIFIED"}, http.StatusOK, nil)
}

// fiAccounts sets the FI's funding and settlement accounts (the API looks both up at the
// sandbox); setting them again to the same is harmless.
func (s *demoSeed) fiAccounts(ctx context.Context, lender *demoClient) error {
	return lender.call(ctx, http.MethodPut, "/api/fi/accounts", map[string]any{
		"fundingAccount":    map[string]string{"partner": demoPartner, "accountNumber": demoFIFunding},
		"settlementAccount": map[string]string{"partner": demoPartner, "accountNumber": demoFISettlement},
	}, http.StatusOK, nil)
}

// loanProduct creates the FI's product unless it has one of that name.
func (s *demoSeed) loanProduct(ctx context.Context, lender *demoClient) error {
	if s.d.LoanProductID != "" {
		return nil
	}
	var list struct {
		Items []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := lender.call(ctx, http.MethodGet, "/api/fi/products?limit=100", nil, http.StatusOK, &list); err != nil {
		return err
	}
	for _, p := range list.Items {
		if p.Name == demoLoanProduct["name"] {
			s.d.LoanProductID = p.ID
			return s.save()
		}
	}
	var p struct {
		ID string `json:"id"`
	}
	if err := lender.call(ctx, http.MethodPost, "/api/fi/products", demoLoanProduct, http.StatusCreated, &p); err != nil {
		return err
	}
	s.d.LoanProductID = p.ID
	return s.save()
}

// loanOptIn opts the business in to the product (already opted in is done).
func (s *demoSeed) loanOptIn(ctx context.Context, _ *demoClient) error {
	owner, err := s.ownerClient(ctx)
	if err != nil {
		return err
	}
	err = owner.call(ctx, http.MethodPost, "/api/lending/product-opt-ins", map[string]string{"productId": s.d.LoanProductID}, http.StatusCreated, nil)
	if apiCode(err) == "LOAN_PRODUCT_ALREADY_OPTED_IN" {
		return nil
	}
	return err
}

// payrollAccount sets the business's payroll account in its payroll settings.
func (s *demoSeed) payrollAccount(ctx context.Context, _ *demoClient) error {
	owner, err := s.ownerClient(ctx)
	if err != nil {
		return err
	}
	return owner.call(ctx, http.MethodPost, "/api/payroll/tenant-settings", map[string]any{
		"payrollAccount": map[string]string{"partner": demoPartner, "accountNumber": demoPayrollAccount, "holderName": demoPayrollHolder},
	}, anySuccess, nil)
}
