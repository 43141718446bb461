package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Payroll tenant settings and the auto-lock policy: the organization's own values (payroll.view
// to read, payroll.edit to change), what is in force (/effective: the platform's override over
// the organization's values over the platform defaults, field by field, with each field's
// source), and the platform's overrides (platform admins only, on the audited cross-tenant
// path). The layers and their rules live in internal/payroll (layers.go).

func (s *Server) payrollSettingsRoutes() []Route {
	org := payrollOrgRoute
	platform := func(method, path, summary string, h gin.HandlerFunc) Route {
		return Route{Method: method, Path: path, Auth: Platform, Summary: summary, Handler: h}
	}
	settings, autoLock := settingsFamily(), autoLockFamily()
	return []Route{
		org(http.MethodGet, "/api/payroll/tenant-settings", "The organization's own payroll settings (unset fields null)", payrollView, s.getPayrollLayer(settings), BodyByMethod),
		org(http.MethodGet, "/api/payroll/tenant-settings/effective", "The payroll settings in force and where each value comes from", payrollView, s.getPayrollEffective(settings), BodyByMethod),
		org(http.MethodPost, "/api/payroll/tenant-settings", "Set or clear some of the organization's payroll settings", payrollEdit, s.changePayrollLayer(settings), BodyByMethod),
		org(http.MethodDelete, "/api/payroll/tenant-settings", "Remove the organization's payroll settings (back to the defaults)", payrollEdit, s.resetPayrollLayer(settings), BodyByMethod),
		org(http.MethodGet, "/api/payroll/auto-lock-policy", "The organization's own auto-lock policy (unset fields null)", payrollView, s.getPayrollLayer(autoLock), BodyByMethod),
		org(http.MethodGet, "/api/payroll/auto-lock-policy/effective", "The auto-lock policy in force and where each value comes from", payrollView, s.getPayrollEffective(autoLock), BodyByMethod),
		org(http.MethodPost, "/api/payroll/auto-lock-policy", "Set or clear some of the organization's auto-lock policy", payrollEdit, s.changePayrollLayer(autoLock), BodyByMethod),
		org(http.MethodDelete, "/api/payroll/auto-lock-policy", "Remove the organization's auto-lock policy (back to the defaults)", payrollEdit, s.resetPayrollLayer(autoLock), BodyByMethod),

		platform(http.MethodGet, "/api/platform/payroll/tenant-settings", "The platform's payroll settings overrides (paged)", s.listPayrollOverrides(settings)),
		platform(http.MethodGet, "/api/platform/payroll/tenant-settings/:tenantId", "The platform's payroll settings override for an organization", s.getPayrollOverride(settings)),
		platform(http.MethodPost, "/api/platform/payroll/tenant-settings/:tenantId", "Force some payroll settings of an organization", s.changePayrollOverride(settings)),
		platform(http.MethodDelete, "/api/platform/payroll/tenant-settings/:tenantId", "Remove the platform's payroll settings override for an organization", s.resetPayrollOverride(settings)),
		platform(http.MethodGet, "/api/platform/payroll/auto-lock-policies", "The platform's auto-lock policy overrides (paged)", s.listPayrollOverrides(autoLock)),
		platform(http.MethodGet, "/api/platform/payroll/auto-lock-policy/:tenantId", "The platform's auto-lock policy override for an organization", s.getPayrollOverride(autoLock)),
		platform(http.MethodPost, "/api/platform/payroll/auto-lock-policy/:tenantId", "Force some of an organization's auto-lock policy", s.changePayrollOverride(autoLock)),
		platform(http.MethodDelete, "/api/platform/payroll/auto-lock-policy/:tenantId", "Remove the platform's auto-lock policy override for an organization", s.resetPayrollOverride(autoLock)),
	}
}

// payrollFamily is what the routes of one layered resource (the settings, the auto-lock policy)
// do with the store; the handlers below serve both.
type payrollFamily struct {
	// target is the audit target type; the actions are a change and a removal of the
	// organization's layer and of the platform's override (refusals are audited DENIED under them).
	target                                     string
	updateAction, overrideAction, removeAction string
	// layer reads the context tenant's row of a layer, as its JSON.
	layer func(ctx context.Context, tx db.BunTx, l payroll.Layer) (any, error)
	// effective reads what is in force, as its JSON.
	effective func(ctx context.Context, tx db.BunTx) (any, error)
	// decode binds a change's body; check names an account the partner must be asked about
	// (nil: none) once the change is known to be valid.
	decode func(c *gin.Context) (change, *Error)
	// change writes a decoded change to a layer and answers the stored layer as its JSON.
	change func(ctx context.Context, tx db.BunTx, l payroll.Layer, ch change) (any, error)
	reset  func(ctx context.Context, tx db.BunTx, l payroll.Layer) (bool, error)
	// list reads a page of the platform's overrides (limit rows after the tenant id after).
	list func(ctx context.Context, tx db.BunTx, after string, limit int) (itemsPage[any], error)
}

// change is a decoded change of a family and the account it names, if any.
type change struct {
	value   any
	account *payroll.Account
}

// --- optional JSON fields ---

// optional is a field of a change: absent (set false), null (set, v nil: clear it) or a value.
// The value is decoded strictly (no unknown fields in an object).
type optional[T any] struct {
	set bool
	v   *T
}

func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.set = true
	if string(b) == "null" {
		o.v = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		return err
	}
	o.v = &v
	return nil
}

func (o optional[T]) field() payroll.Field[T] { return payroll.Field[T]{Set: o.set, Value: o.v} }

// --- the settings ---

type payrollAccountJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

// payrollSettingsValuesJSON are a layer's values (null: not set in the layer).
type payrollSettingsValuesJSON struct {
	MonthlyWorkingHours        *int64              `json:"monthlyWorkingHours"`
	PensionEmployeeBasisPoints *int64              `json:"pensionEmployeeBasisPoints"`
	PensionEmployerBasisPoints *int64              `json:"pensionEmployerBasisPoints"`
	PayrollAccount             *payrollAccountJSON `json:"payrollAccount"`
	PayCadence                 *string             `json:"payCadence"`
	PayDayOfMonth              *int64              `json:"payDayOfMonth"`
	CourtOrderAutoSubmit       *bool               `json:"courtOrderAutoSubmit"`
}

type payrollSettingsLayerJSON struct {
	TenantID string        `json:"tenantId"`
	Layer    payroll.Layer `json:"layer"`
	payrollSettingsValuesJSON
	UpdatedBy *string    `json:"updatedBy"`
	UpdatedAt *time.Time `json:"updatedAt"`
}

type payrollSettingsEffectiveJSON struct {
	TenantID                   string                    `json:"tenantId"`
	MonthlyWorkingHours        int64                     `json:"monthlyWorkingHours"`
	PensionEmployeeBasisPoints int64                     `json:"pensionEmployeeBasisPoints"`
	PensionEmployerBasisPoints int64                     `json:"pensionEmployerBasisPoints"`
	PayrollAccount             *payrollAccountJSON       `json:"payrollAccount"`
	PayCadence                 string                    `json:"payCadence"`
	PayDayOfMonth              int64                     `json:"payDayOfMonth"`
	CourtOrderAutoSubmit       bool                      `json:"courtOrderAutoSubmit"`
	Sources                    map[string]payroll.Source `json:"sources"`
}

type payrollSettingsChangeJSON struct {
	MonthlyWorkingHours        optional[int64]              `json:"monthlyWorkingHours"`
	PensionEmployeeBasisPoints optional[int64]              `json:"pensionEmployeeBasisPoints"`
	PensionEmployerBasisPoints optional[int64]              `json:"pensionEmployerBasisPoints"`
	PayrollAccount             optional[payrollAccountJSON] `json:"payrollAccount"`
	PayCadence                 optional[string]             `json:"payCadence"`
	PayDayOfMonth              optional[int64]              `json:"payDayOfMonth"`
	CourtOrderAutoSubmit       optional[bool]               `json:"courtOrderAutoSubmit"`
}

func toPayrollAccountJSON(a *payroll.Account) *payrollAccountJSON {
	if a == nil {
		return nil
	}
	return &payrollAccountJSON{Partner: a.Partner, AccountNumber: a.AccountNumber, HolderName: a.HolderName}
}

// layerMeta are a stored layer's updatedBy and updatedAt (null when the tenant has no row).
func layerMeta(by string, at time.Time) (*string, *time.Time) {
	if at.IsZero() {
		return nil, nil
	}
	return &by, optionalTime(at)
}

func toPayrollSettingsLayerJSON(l payroll.SettingsLayer) payrollSettingsLayerJSON {
	v := l.Values
	out := payrollSettingsLayerJSON{TenantID: l.TenantID, Layer: l.Layer, payrollSettingsValuesJSON: payrollSettingsValuesJSON{
		MonthlyWorkingHours: v.MonthlyWorkingHours, PensionEmployeeBasisPoints: v.PensionEmployeeBasisPoints,
		PensionEmployerBasisPoints: v.PensionEmployerBasisPoints, PayrollAccount: toPayrollAccountJSON(v.PayrollAccount),
		PayCadence: v.PayCadence, PayDayOfMonth: v.PayDayOfMonth, CourtOrderAutoSubmit: v.CourtOrderAutoSubmit}}
	out.UpdatedBy, out.UpdatedAt = layerMeta(l.UpdatedBy, l.UpdatedAt)
	return out
}

func settingsFamily() payrollFamily {
	return payrollFamily{
		target: payroll.TargetSettings, updateAction: payroll.ActionUpdateSettings,
		overrideAction: payroll.ActionOverrideSettings, removeAction: payroll.ActionRemoveSettingsOverride,
		layer: func(ctx context.Context, tx db.BunTx, l payroll.Layer) (any, error) {
			out, err := payroll.SettingsLayerOf(ctx, tx, l)
			return toPayrollSettingsLayerJSON(out), err
		},
		effective: func(ctx context.Context, tx db.BunTx) (any, error) {
			e, err := payroll.EffectiveSettings(ctx, tx)
			return payrollSettingsEffectiveJSON{TenantID: e.TenantID, MonthlyWorkingHours: e.MonthlyWorkingHours,
				PensionEmployeeBasisPoints: e.PensionEmployeeBasisPoints, PensionEmployerBasisPoints: e.PensionEmployerBasisPoints,
				PayrollAccount: toPayrollAccountJSON(e.PayrollAccount), PayCadence: e.PayCadence, PayDayOfMonth: e.PayDayOfMonth,
				CourtOrderAutoSubmit: e.CourtOrderAutoSubmit, Sources: e.Sources}, err
		},
		decode: func(c *gin.Context) (change, *Error) {
			var req payrollSettingsChangeJSON
			if e := bindJSON(c, &req); e != nil {
				return change{}, e
			}
			ch := payroll.SettingsChange{MonthlyWorkingHours: req.MonthlyWorkingHours.field(),
				PensionEmployeeBasisPoints: req.PensionEmployeeBasisPoints.field(), PensionEmployerBasisPoints: req.PensionEmployerBasisPoints.field(),
				PayCadence: req.PayCadence.field(), PayDayOfMonth: req.PayDayOfMonth.field(), CourtOrderAutoSubmit: req.CourtOrderAutoSubmit.field()}
			ch.PayrollAccount.Set = req.PayrollAccount.set
			if a := req.PayrollAccount.v; a != nil {
				// The holder name is compared with the bank's after trimming, like an employee's.
				ch.PayrollAccount.Value = &payroll.Account{Partner: a.Partner, AccountNumber: a.AccountNumber, HolderName: strings.TrimSpace(a.HolderName)}
			}
			if err := ch.Validate(); err != nil {
				return change{}, fieldError(err)
			}
			return change{value: ch, account: ch.PayrollAccount.Value}, nil
		},
		change: func(ctx context.Context, tx db.BunTx, l payroll.Layer, ch change) (any, error) {
			out, err := payroll.ChangeSettings(ctx, tx, l, ch.value.(payroll.SettingsChange))
			return toPayrollSettingsLayerJSON(out), err
		},
		reset: payroll.ResetSettings,
		list: overrideList(payroll.ListSettingsOverrides, func(r payroll.SettingsLayer) string { return r.TenantID },
			func(r payroll.SettingsLayer) any { return toPayrollSettingsLayerJSON(r) }),
	}
}

// --- the auto-lock policy ---

type payrollAutoLockLayerJSON struct {
	TenantID           string        `json:"tenantId"`
	Layer              payroll.Layer `json:"layer"`
	Enabled            *bool         `json:"enabled"`
	DaysAfterPeriodEnd *int64        `json:"daysAfterPeriodEnd"`
	LockTime           *string       `json:"lockTime"`
	TimeZone           *string       `json:"timeZone"`
	UpdatedBy          *string       `json:"updatedBy"`
	UpdatedAt          *time.Time    `json:"updatedAt"`
}

type payrollAutoLockEffectiveJSON struct {
	TenantID           string                    `json:"tenantId"`
	Enabled            bool                      `json:"enabled"`
	DaysAfterPeriodEnd int64                     `json:"daysAfterPeriodEnd"`
	LockTime           string                    `json:"lockTime"`
	TimeZone           string                    `json:"timeZone"`
	Sources            map[string]payroll.Source `json:"sources"`
}

type payrollAutoLockChangeJSON struct {
	Enabled            optional[bool]   `json:"enabled"`
	DaysAfterPeriodEnd optional[int64]  `json:"daysAfterPeriodEnd"`
	LockTime           optional[string] `json:"lockTime"`
	TimeZone           optional[string] `json:"timeZone"`
}

func toPayrollAutoLockLayerJSON(l payroll.AutoLockLayer) payrollAutoLockLayerJSON {
	v := l.Values
	out := payrollAutoLockLayerJSON{TenantID: l.TenantID, Layer: l.Layer, Enabled: v.Enabled, DaysAfterPeriodEnd: v.DaysAfterPeriodEnd,
		LockTime: v.LockTime, TimeZone: v.TimeZone}
	out.UpdatedBy, out.UpdatedAt = layerMeta(l.UpdatedBy, l.UpdatedAt)
	return out
}

func autoLockFamily() payrollFamily {
	return payrollFamily{
		target: payroll.TargetAutoLock, updateAction: payroll.ActionUpdateAutoLock,
		overrideAction: payroll.ActionOverrideAutoLock, removeAction: payroll.ActionRemoveAutoLockOverride,
		layer: func(ctx context.Context, tx db.BunTx, l payroll.Layer) (any, error) {
			out, err := payroll.AutoLockLayerOf(ctx, tx, l)
			return toPayrollAutoLockLayerJSON(out), err
		},
		effective: func(ctx context.Context, tx db.BunTx) (any, error) {
			p, err := payroll.EffectiveAutoLock(ctx, tx)
			return payrollAutoLockEffectiveJSON{TenantID: p.TenantID, Enabled: p.Enabled, DaysAfterPeriodEnd: p.DaysAfterPeriodEnd,
				LockTime: p.LockTime, TimeZone: p.TimeZone, Sources: p.Sources}, err
		},
		decode: func(c *gin.Context) (change, *Error) {
			var req payrollAutoLockChangeJSON
			if e := bindJSON(c, &req); e != nil {
				return change{}, e
			}
			ch := payroll.AutoLockChange{Enabled: req.Enabled.field(), DaysAfterPeriodEnd: req.DaysAfterPeriodEnd.field(),
				LockTime: req.LockTime.field(), TimeZone: req.TimeZone.field()}
			if err := ch.Validate(); err != nil {
				return change{}, fieldError(err)
			}
			return change{value: ch}, nil
		},
		change: func(ctx context.Context, tx db.BunTx, l payroll.Layer, ch change) (any, error) {
			out, err := payroll.ChangeAutoLock(ctx, tx, l, ch.value.(payroll.AutoLockChange))
			return toPayrollAutoLockLayerJSON(out), err
		},
		reset: payroll.ResetAutoLock,
		list: overrideList(payroll.ListAutoLockOverrides, func(r payroll.AutoLockLayer) string { return r.TenantID },
			func(r payroll.AutoLockLayer) any { return toPayrollAutoLockLayerJSON(r) }),
	}
}

// overrideList is a family's list over read, which reads limit rows after a tenant id: the
// overrides (read with limit+1) as a page, each shown by toJSON.
func overrideList[T any](read func(ctx context.Context, tx db.BunTx, after string, limit int) ([]T, error), tenantOf func(T) string,
	toJSON func(T) any) func(ctx context.Context, tx db.BunTx, after string, limit int) (itemsPage[any], error) {
	return func(ctx context.Context, tx db.BunTx, after string, limit int) (itemsPage[any], error) {
		rows, err := read(ctx, tx, after, limit+1)
		if err != nil {
			return itemsPage[any]{}, err
		}
		return itemsPageOf(rows, limit, tenantOf, toJSON), nil
	}
}

// --- handlers ---

// payrollAccountCheck is the lookup of a payroll account a change sets.
func payrollAccountCheck(a payroll.Account) accountCheck {
	return accountCheck{Partner: a.Partner, AccountNumber: a.AccountNumber, HolderName: a.HolderName,
		Field: payroll.FieldPayrollAccount, What: "the payroll account",
		PartnerUnknown: "PAYROLL_ACCOUNT_PARTNER_UNKNOWN", NotFound: "PAYROLL_ACCOUNT_NOT_FOUND", HolderMismatch: "PAYROLL_ACCOUNT_HOLDER_MISMATCH"}
}

// checkChangedAccount asks the partner about the account a change sets, unless the layer
// already holds exactly that account (changing another field asks nothing, so it works while
// the gateway is down). current reads the layer's stored account.
func (s *Server) checkChangedAccount(c *gin.Context, ch change, current func() (*payroll.Account, error)) error {
	if ch.account == nil {
		return nil
	}
	stored, err := current()
	if err != nil {
		return payrollError(err)
	}
	if stored != nil && *stored == *ch.account {
		return nil
	}
	if e := s.checkPartnerAccount(c, payrollAccountCheck(*ch.account)); e != nil {
		return e
	}
	return nil
}

func storedAccount(ctx context.Context, tx db.BunTx, l payroll.Layer) (*payroll.Account, error) {
	cur, err := payroll.SettingsLayerOf(ctx, tx, l)
	return cur.Values.PayrollAccount, err
}

func (s *Server) getPayrollLayer(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (any, error) {
			return f.layer(ctx, tx, payroll.LayerTenant)
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (s *Server) getPayrollEffective(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		out, err := inTenantBunValue(s, c, f.effective)
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (s *Server) changePayrollLayer(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		ch, e := f.decode(c)
		if e != nil {
			writeError(c, e)
			return
		}
		if err := s.checkChangedAccount(c, ch, func() (*payroll.Account, error) {
			return inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (*payroll.Account, error) {
				return storedAccount(ctx, tx, payroll.LayerTenant)
			})
		}); err != nil {
			s.payrollSettingsRefused(c, callerOf(c).Tenant, f.updateAction, f.target, err)
			return
		}
		out, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (any, error) {
			return f.change(ctx, tx, payroll.LayerTenant, ch)
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (s *Server) resetPayrollLayer(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		err := s.inTenantBun(c, func(ctx context.Context, tx db.BunTx) error {
			_, err := f.reset(ctx, tx, payroll.LayerTenant)
			return err
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		c.Status(http.StatusNoContent)
	}
}

// payrollSettingsRefused answers err; a refusal by a rule (409: a deleted organization; 422: the
// partner refused the payroll account) is first audited DENIED as action on the organization's
// target, under that organization, in a transaction of its own (the change itself wrote
// nothing). Field errors, not-found and our own errors are answered unaudited.
func (s *Server) payrollSettingsRefused(c *gin.Context, tenant, action, target string, err error) {
	var e *Error
	if errors.As(err, &e) && (e.Status == http.StatusConflict || e.Status == http.StatusUnprocessableEntity) {
		if aerr := s.auditIn(c.Request.Context(), tenant, callerOf(c).User.ID, audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: target, TargetID: tenant, Details: map[string]string{"code": e.Code}}); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	writeError(c, err)
}

// platformTenant reads the :tenantId of a platform route (an identifier); it has answered when
// ok is false.
func platformTenant(c *gin.Context) (string, bool) {
	id := c.Param("tenantId")
	if err := field.Identifier("tenantId", id, 0); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	return id, true
}

// asPlatformBunIn runs fn on the audited cross-tenant path with ctx scoped to tenant, after
// checking that tenant names a business organization (forWrite: one not deleted): the rows fn
// writes, its audit rows and events are that organization's.
func (s *Server) asPlatformBunIn(c *gin.Context, tenant string, forWrite bool, fn func(ctx context.Context, tx db.BunTx) error) error {
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	return s.asPlatformBun(c, func(tx db.BunTx) error {
		if err := payroll.CheckOrganization(ctx, tx, forWrite); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

func (s *Server) getPayrollOverride(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		tenant, ok := platformTenant(c)
		if !ok {
			return
		}
		var out any
		err := s.asPlatformBunIn(c, tenant, false, func(ctx context.Context, tx db.BunTx) (err error) {
			out, err = f.layer(ctx, tx, payroll.LayerOverride)
			return err
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (s *Server) changePayrollOverride(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		tenant, ok := platformTenant(c)
		if !ok {
			return
		}
		ch, e := f.decode(c)
		if e != nil {
			writeError(c, e)
			return
		}
		if err := s.checkChangedAccount(c, ch, func() (acct *payroll.Account, err error) {
			err = s.asPlatformBunIn(c, tenant, true, func(ctx context.Context, tx db.BunTx) error {
				acct, err = storedAccount(ctx, tx, payroll.LayerOverride)
				return err
			})
			return acct, err
		}); err != nil {
			s.payrollSettingsRefused(c, tenant, f.overrideAction, f.target, err)
			return
		}
		var out any
		err := s.asPlatformBunIn(c, tenant, true, func(ctx context.Context, tx db.BunTx) (err error) {
			out, err = f.change(ctx, tx, payroll.LayerOverride, ch)
			return err
		})
		if err != nil {
			s.payrollSettingsRefused(c, tenant, f.overrideAction, f.target, payrollError(err))
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (s *Server) resetPayrollOverride(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		tenant, ok := platformTenant(c)
		if !ok {
			return
		}
		err := s.asPlatformBunIn(c, tenant, true, func(ctx context.Context, tx db.BunTx) error {
			_, err := f.reset(ctx, tx, payroll.LayerOverride)
			return err
		})
		if err != nil {
			s.payrollSettingsRefused(c, tenant, f.removeAction, f.target, payrollError(err))
			return
		}
		c.Status(http.StatusNoContent)
	}
}

func (s *Server) listPayrollOverrides(f payrollFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		for k := range c.Request.URL.Query() {
			if k != "limit" && k != "cursor" {
				writeError(c, fieldError(&field.Error{Field: k, Problem: "is not a parameter of this route (limit, cursor)"}))
				return
			}
		}
		limit, cursor, ok := ewaPage(c)
		if !ok {
			return
		}
		var out itemsPage[any]
		err := s.asPlatformBun(c, func(tx db.BunTx) (err error) {
			ctx := tenancy.WithTenant(c.Request.Context(), "*")
			out, err = f.list(ctx, tx, cursor, limit)
			return err
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		c.JSON(http.StatusOK, out)
	}
}
