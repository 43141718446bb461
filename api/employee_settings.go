package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// GET /api/employee/settings: the signed-in employee's settings page in one read, each section
// as its own route answers it — the employee record (GET /api/me/profile), the notification
// preferences (GET /api/notifications/preferences), the login account's security (what GET
// /api/auth/get-session, /api/auth/passkey/list-user-passkeys and /api/auth/list-sessions show,
// counted), and the live deductions on their pay (GET /api/me/deduction-mandates, PENDING,
// ACTIVE or SUSPENDED), each saying whether they may cancel it. The employee is the one the
// dashboard shows (myEmployee); an unlinked caller is 404 EMPLOYEE_NOT_LINKED. Every read is on
// one snapshot (snapshot): the employer's tenant in two transactions (the mandates are a bun
// read), the sessions in the caller's own scope.

// maxSettingsDeductions bounds the live deductions the page lists; more says there are more
// (GET /api/me/deduction-mandates lists them all).
const maxSettingsDeductions = 50

type employeeSecurityJSON struct {
	Email            string  `json:"email"`
	EmailVerified    bool    `json:"emailVerified"`
	PhoneNumber      *string `json:"phoneNumber"`
	PhoneVerified    bool    `json:"phoneVerified"`
	TwoFactorEnabled bool    `json:"twoFactorEnabled"`
	Passkeys         int     `json:"passkeys"`
	// Sessions counts the signed-in devices, this one included (at most
	// identity.MaxListedSessions, as list-sessions lists them).
	Sessions int `json:"sessions"`
}

type employeeDeductionsJSON struct {
	Live []myMandateJSON `json:"live"`
	More bool            `json:"more"`
}

type employeeSettingsJSON struct {
	EmployeeID    string                      `json:"employeeId"`
	BusinessID    string                      `json:"businessId"`
	Profile       employeeJSON                `json:"profile"`
	Notifications notificationPreferencesJSON `json:"notifications"`
	Security      employeeSecurityJSON        `json:"security"`
	Deductions    employeeDeductionsJSON      `json:"deductions"`
}

func (s *Server) employeeSettingsRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/employee/settings", Auth: Session,
		Summary: "The caller's settings as an employee in one read: profile, notifications, account security and the deductions on their pay",
		Handler: snapshot(s.employeeSettings)}}
}

func (s *Server) employeeSettings(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	out := employeeSettingsJSON{EmployeeID: emp, BusinessID: tenant}
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		e, err := employees.ByID(ctx, tx, tenant, emp)
		switch {
		case errors.Is(err, employees.ErrNotFound):
			return errEmployeeNotLinked // gone since myEmployee read it
		case err != nil:
			return err
		case e.UserID != user:
			return errEmployeeNotLinked // unlinked since myEmployee read it
		}
		out.Profile = toEmployeeJSON(e)
		u, err := identity.UserByID(ctx, tx, user)
		if err != nil {
			return err
		}
		keys, err := identity.PasskeysOf(ctx, tx, user)
		if err != nil {
			return err
		}
		out.Security = employeeSecurityJSON{Email: u.Email, EmailVerified: u.EmailVerified, PhoneNumber: optionalString(u.PhoneNumber),
			PhoneVerified: u.PhoneVerified, TwoFactorEnabled: u.TwoFactorEnabled, Passkeys: len(keys)}
		p, err := notifications.Load(ctx, tx, tenant, user)
		out.Notifications = toPreferencesJSON(p)
		return err
	})
	if err == nil {
		var live []payroll.Mandate
		live, err = asEmployee(s, c, tenant, func(ctx context.Context, tx db.BunTx) ([]payroll.Mandate, error) {
			return payroll.ListMandates(ctx, tx, payroll.MandateFilter{EmployeeID: emp, Statuses: payroll.LiveMandateStatuses,
				Page: db.Page{Limit: maxSettingsDeductions + 1}})
		})
		out.Deductions = employeeDeductionsJSON{Live: []myMandateJSON{}, More: len(live) > maxSettingsDeductions}
		for i, m := range live {
			if i < maxSettingsDeductions {
				out.Deductions.Live = append(out.Deductions.Live, toMyMandateJSON(m, user))
			}
		}
	}
	if err == nil {
		var sessions []identity.DeviceSession
		sessions, err = identity.UserSessions(c.Request.Context(), s.deps.DB, user, s.now())
		out.Security.Sessions = len(sessions)
	}
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, out)
}
