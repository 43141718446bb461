package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// GET /api/employee/onboarding: the signed-in employee's onboarding checklist — each step read
// from what is stored about them now (their login account, their employee record in the
// employer's tenant, their KYC and their screening there), never a flag of its own. The employee
// is the one the dashboard shows (myEmployee); an unlinked caller is 404 EMPLOYEE_NOT_LINKED.
//
// canUseMoneyFeatures is the answer of the gates the EWA disburse saga runs on the employee
// before any money moves, each read here through the very function the saga's gate calls: the
// employee ACTIVE (ewa.LoadPlan), kyc.Gate, and sanctions.Gate then GateAs under the name on
// record (activities' sanctions gate). The saga's account gate asks the partner bank at payout
// time and no lookup outcome is stored, so it is not part of the answer; nor is the employer's
// funding account, which is no fact of the employee's.

func (s *Server) employeeOnboardingRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/employee/onboarding", Auth: Session,
		Summary: "The caller's onboarding checklist as an employee, and whether the money features are open to them",
		Handler: snapshot(s.employeeOnboarding)}}
}

// Step keys, in the order the checklist lists them.
const (
	stepAccountLinked  = "account_linked"
	stepEmailVerified  = "email_verified"
	stepPhoneVerified  = "phone_verified"
	stepSecondFactor   = "second_factor"
	stepIdentity       = "identity_verification"
	stepSanctions      = "sanctions_screening"
	stepPayoutAccount  = "payout_account"
	stepEmploymentOpen = "employment_active"
)

// Step states.
const (
	stepDone           = "DONE"            // the fact holds
	stepPending        = "PENDING"         // waiting on someone else (a reviewer, the platform)
	stepActionRequired = "ACTION_REQUIRED" // the employee completes it: action names the route
	stepBlocked        = "BLOCKED"         // no route of the employee's completes it (compliance, the employer)
)

// The second-factor step's status: which methods the account has.
const (
	secondFactorTOTP    = "TOTP"
	secondFactorPasskey = "PASSKEY"
	secondFactorBoth    = "TOTP_AND_PASSKEY"
)

// onboardingActionJSON is the route the employee calls next to complete a step (a row of the
// route table; TestEmployeeOnboardingActionsAreRoutes).
type onboardingActionJSON struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is what the call's body must carry beside what the employee fills in (the KYC
	// submission's employeeId); absent when nothing.
	Body map[string]string `json:"body,omitempty"`
}

var (
	actionVerifyEmail = &onboardingActionJSON{Method: http.MethodPost, Path: "/api/auth/send-verification-email"}
	actionSendOTP     = &onboardingActionJSON{Method: http.MethodPost, Path: "/api/auth/phone-number/send-otp"}
	actionTwoFactor   = &onboardingActionJSON{Method: http.MethodPost, Path: "/api/auth/two-factor/enable"}
)

// submitKycAction is the identity step's action: the employee's own submission, named by their
// employee id so that it is theirs in the employer's tenant whichever organization is active
// (its photo and documents uploaded with POST /api/uploads?employeeId=, the same id).
func submitKycAction(employeeID string) *onboardingActionJSON {
	return &onboardingActionJSON{Method: http.MethodPost, Path: "/api/kyc", Body: map[string]string{"employeeId": employeeID}}
}

type employeeOnboardingStepJSON struct {
	Key   string `json:"key"`
	State string `json:"state"`
	// Status is the fact's own value where it has more than yes or no (the KYC standing, the
	// screening standing, the employee's status, the second factors); null otherwise.
	Status *string               `json:"status"`
	Action *onboardingActionJSON `json:"action"`
	// MoneyGate: the money sagas' gates read this step's fact (canUseMoneyFeatures).
	MoneyGate bool `json:"moneyGate"`
}

type employeeOnboardingJSON struct {
	EmployeeID string                       `json:"employeeId"`
	BusinessID string                       `json:"businessId"`
	AsOf       time.Time                    `json:"asOf"`
	Steps      []employeeOnboardingStepJSON `json:"steps"`
	Progress   struct {
		Done  int `json:"done"`
		Total int `json:"total"`
	} `json:"progress"`
	CanUseMoneyFeatures bool `json:"canUseMoneyFeatures"`
}

// onboardingFacts is what the checklist is read from, in one transaction of the employer's tenant.
type onboardingFacts struct {
	user      identity.User
	passkeys  int
	employee  employees.Employee
	kyc       kyc.Standing
	sanctions sanctions.Standing
}

func (s *Server) employeeOnboarding(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	now := s.now().UTC()
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var f onboardingFacts
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		switch f.employee, err = employees.ByID(ctx, tx, tenant, emp); {
		case errors.Is(err, employees.ErrNotFound):
			return errEmployeeNotLinked // gone since myEmployee read it
		case err != nil:
			return err
		case f.employee.UserID != cl.User.ID:
			return errEmployeeNotLinked // unlinked since myEmployee read it
		}
		if f.user, err = identity.UserByID(ctx, tx, cl.User.ID); err != nil {
			return err
		}
		keys, err := identity.PasskeysOf(ctx, tx, cl.User.ID)
		if err != nil {
			return err
		}
		f.passkeys = len(keys)
		if f.kyc, err = kyc.SubjectStanding(ctx, tx, tenant, kyc.SubjectEmployee, emp, now); err != nil {
			return err
		}
		f.sanctions, err = sanctions.SubjectStanding(ctx, tx, tenant, sanctions.SubjectEmployee, emp, f.employee.FullName)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toEmployeeOnboardingJSON(tenant, now, f))
}

func toEmployeeOnboardingJSON(tenant string, now time.Time, f onboardingFacts) employeeOnboardingJSON {
	out := employeeOnboardingJSON{EmployeeID: f.employee.ID, BusinessID: tenant, AsOf: now}
	add := func(key, state, status string, action *onboardingActionJSON, gate bool) {
		st := employeeOnboardingStepJSON{Key: key, State: state, MoneyGate: gate}
		if status != "" {
			st.Status = &status
		}
		if state == stepActionRequired {
			st.Action = action
		}
		out.Steps = append(out.Steps, st)
	}
	yes := func(done bool, otherwise string) string {
		if done {
			return stepDone
		}
		return otherwise
	}

	add(stepAccountLinked, yes(f.employee.UserID == f.user.ID, stepPending), "", nil, false)
	add(stepEmailVerified, yes(f.user.EmailVerified, stepActionRequired), "", actionVerifyEmail, false)
	add(stepPhoneVerified, yes(f.user.PhoneVerified, stepActionRequired), "", actionSendOTP, false)
	factors := ""
	switch {
	case f.user.TwoFactorEnabled && f.passkeys > 0:
		factors = secondFactorBoth
	case f.user.TwoFactorEnabled:
		factors = secondFactorTOTP
	case f.passkeys > 0:
		factors = secondFactorPasskey
	}
	add(stepSecondFactor, yes(factors != "", stepActionRequired), factors, actionTwoFactor, false)

	kycState := stepActionRequired // NOT_STARTED, MORE_INFO_REQUESTED, REJECTED, EXPIRED: submit (again)
	switch f.kyc {
	case kyc.StandingApproved:
		kycState = stepDone
	case kyc.StandingPending, kyc.StandingInReview:
		kycState = stepPending
	}
	add(stepIdentity, kycState, string(f.kyc), submitKycAction(f.employee.ID), true)

	screenState := stepPending // NOT_SCREENED (a KYC approval screens), UNDER_REVIEW
	switch f.sanctions {
	case sanctions.StandingClear:
		screenState = stepDone
	case sanctions.StandingBlocked:
		screenState = stepBlocked
	}
	add(stepSanctions, screenState, string(f.sanctions), nil, true)

	// The employer records the payout account (the schema requires one); no lookup outcome is stored.
	add(stepPayoutAccount, yes(f.employee.Payout.Partner != "" && f.employee.Payout.AccountNumber != "", stepPending), "", nil, false)
	active := f.employee.Status == employees.Active
	add(stepEmploymentOpen, yes(active, stepBlocked), string(f.employee.Status), nil, true)

	for _, st := range out.Steps {
		if st.State == stepDone {
			out.Progress.Done++
		}
	}
	out.Progress.Total = len(out.Steps)
	// The gates of the EWA disburse saga, as each gate function answered above.
	out.CanUseMoneyFeatures = active && f.kyc == kyc.StandingApproved && f.sanctions == sanctions.StandingClear
	return out
}
