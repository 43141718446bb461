package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Equb, rotating savings circles (issue 28): a business's organizers (org admins) create groups
// and open their cycles; its employees (org members linked to an employee) join, leave, and see
// their own groups, contributions and payouts (/api/me/equb/*). The rules and the stores are
// internal/equb; the money (contributions and payouts) moves in the equb sagas (api/equb_money.go,
// workflows/equb_*.go). A group of another organization is 404, and so is a group's cycles to a
// plain member who is not in it.

func (s *Server) equbRoutes() []Route {
	biz := func(r Route) Route { r.Handler = s.forKind(orgs.Business, r.Handler); return r }
	return []Route{
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups", Auth: Org, Role: orgs.Admin, Summary: "Create an equb group (organizer)", Handler: s.createEqubGroup}),
		biz(Route{Method: http.MethodGet, Path: "/api/equb/groups", Auth: Org, Role: orgs.PlainMember, Summary: "The organization's equb groups (paged)", Handler: s.listEqubGroups}),
		biz(Route{Method: http.MethodGet, Path: "/api/equb/groups/:id", Auth: Org, Role: orgs.PlainMember, Summary: "One equb group with its members and payout order", Handler: s.getEqubGroup}),
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/join", Auth: Org, Role: orgs.PlainMember, Summary: "Join an equb group as the caller's employee", Handler: s.joinEqubGroup, Body: BodyNone}),
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/leave", Auth: Org, Role: orgs.PlainMember, Summary: "Leave an equb group", Handler: s.leaveEqubGroup}),
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/payout-account", Auth: Org, Role: orgs.PlainMember, Body: BodyNone,
			Summary: "Take the caller's current payout account for their equb membership", Handler: s.takeEqubAccount}),
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/cycles", Auth: Org, Role: orgs.Admin, Summary: "Open the group's next cycle with its escrow binding (organizer)", Handler: s.openEqubCycle, Body: BodyNone}),
		biz(Route{Method: http.MethodGet, Path: "/api/equb/groups/:id/cycles", Auth: Org, Role: orgs.PlainMember, Summary: "The group's cycles (organizers and the group's members)", Handler: s.listEqubCycles}),
		{Method: http.MethodGet, Path: "/api/me/equb/groups", Auth: Session, Summary: "The caller's own equb groups", Handler: s.myEqubGroups},
		{Method: http.MethodGet, Path: "/api/me/equb/contributions", Auth: Session, Summary: "The caller's own equb contributions", Handler: s.myEqubContributions},
		{Method: http.MethodGet, Path: "/api/me/equb/payouts", Auth: Session, Summary: "The caller's own equb payouts", Handler: s.myEqubPayouts},
	}
}

// --- JSON ---

type equbGroupJSON struct {
	ID                     string             `json:"id"`
	BusinessID             string             `json:"businessId"`
	Name                   string             `json:"name"`
	ContributionSantim     int64              `json:"contributionSantim"`
	MaxMembers             int                `json:"maxMembers"`
	PayoutOrder            string             `json:"payoutOrder"`
	AllowChangesAfterStart bool               `json:"allowChangesAfterStart"`
	EscrowAccount          lendingAccountJSON `json:"escrowAccount"`
	Status                 string             `json:"status"`
	LotterySeed            *string            `json:"lotterySeed"`
	CyclesTotal            int                `json:"cyclesTotal"`
	DefaultRule            string             `json:"defaultRule"`
	ContributionDueHours   int                `json:"contributionDueHours"`
	CreatedAt              time.Time          `json:"createdAt"`
	UpdatedAt              time.Time          `json:"updatedAt"`
	Members                []equbMemberJSON   `json:"members,omitempty"`
}

type equbMemberJSON struct {
	ID               string     `json:"id"`
	EmployeeID       string     `json:"employeeId"`
	Status           string     `json:"status"`
	Position         *int       `json:"position"`
	JoinedAt         time.Time  `json:"joinedAt"`
	LeftAt           *time.Time `json:"leftAt"`
	SettlementSantim *int64     `json:"settlementSantim"`
	FirstCycle       int        `json:"firstCycle"`
}

func toEqubGroupJSON(g equb.Group) equbGroupJSON {
	return equbGroupJSON{ID: g.ID, BusinessID: g.TenantID, Name: g.Name, ContributionSantim: g.ContributionSantim, MaxMembers: g.MaxMembers,
		PayoutOrder: g.PayoutOrder, AllowChangesAfterStart: g.AllowChangesAfterStart,
		EscrowAccount: lendingAccountJSON{g.EscrowPartner, g.EscrowAccountNumber}, Status: g.Status, LotterySeed: g.LotterySeed,
		CyclesTotal: g.CyclesTotal, DefaultRule: g.DefaultRule, ContributionDueHours: g.ContributionDueHours, CreatedAt: g.CreatedAt.UTC(), UpdatedAt: g.UpdatedAt.UTC()}
}

func toEqubMemberJSON(m equb.Membership) equbMemberJSON {
	return equbMemberJSON{ID: m.ID, EmployeeID: m.EmployeeID, Status: m.Status, Position: m.Position, JoinedAt: m.JoinedAt.UTC(),
		LeftAt: utcPtr(m.LeftAt), SettlementSantim: m.SettlementSantim, FirstCycle: m.FirstCycle}
}

type equbGroupListJSON struct {
	Items      []equbGroupJSON `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

type equbBindingJSON struct {
	ID                  string    `json:"id"`
	Partner             string    `json:"partner"`
	PartnerAccountID    string    `json:"partnerAccountId"`
	LedgerPoolAccountID string    `json:"ledgerPoolAccountId"`
	Status              string    `json:"status"`
	VerifiedAt          time.Time `json:"verifiedAt"`
}

type equbCycleJSON struct {
	ID                  string           `json:"id"`
	GroupID             string           `json:"groupId"`
	Number              int              `json:"number"`
	RecipientID         string           `json:"recipientId"`
	ContributionSantim  int64            `json:"contributionSantim"`
	MembersDue          int              `json:"membersDue"`
	Status              string           `json:"status"`
	OpenedAt            time.Time        `json:"openedAt"`
	DueAt               time.Time        `json:"dueAt"`
	PaidAt              *time.Time       `json:"paidAt"`
	EscrowBinding       *equbBindingJSON `json:"escrowBinding"`
	ContributionsPosted int              `json:"contributionsPosted"`
	ContributionsOpen   int              `json:"contributionsPending"`
	PoolSantim          int64            `json:"poolSantim"`
	PayoutStatus        *string          `json:"payoutStatus"`
	DefaultedCount      int              `json:"defaultedCount"`
}

func toEqubBindingJSON(b *equb.Binding) *equbBindingJSON {
	if b == nil {
		return nil
	}
	return &equbBindingJSON{ID: b.ID, Partner: b.Partner, PartnerAccountID: b.PartnerAccountID, LedgerPoolAccountID: b.LedgerPoolAccountID,
		Status: b.Status, VerifiedAt: b.VerifiedAt.UTC()}
}

func toEqubCycleJSON(v equb.CycleView) equbCycleJSON {
	out := equbCycleJSON{ID: v.ID, GroupID: v.GroupID, Number: v.Number, RecipientID: v.RecipientID, ContributionSantim: v.ContributionSantim,
		MembersDue: v.MembersDue, Status: v.Status, OpenedAt: v.OpenedAt.UTC(), DueAt: v.DueAt.UTC(), PaidAt: utcPtr(v.PaidAt), EscrowBinding: toEqubBindingJSON(v.Binding),
		ContributionsPosted: v.ContributionsPosted, ContributionsOpen: v.ContributionsOpen, PoolSantim: v.PostedSantim, DefaultedCount: v.Defaulted}
	if v.PayoutStatus != "" {
		ps := v.PayoutStatus
		out.PayoutStatus = &ps
	}
	return out
}

type equbCycleListJSON struct {
	Items []equbCycleJSON `json:"items"`
}

// --- groups ---

type equbGroupRequest struct {
	Name                   *string             `json:"name"`
	ContributionSantim     *int64              `json:"contributionSantim"`
	MaxMembers             *int                `json:"maxMembers"`
	PayoutOrder            *string             `json:"payoutOrder"`
	AllowChangesAfterStart *bool               `json:"allowChangesAfterStart"`
	EscrowAccount          *lendingAccountJSON `json:"escrowAccount"`
	DefaultRule            *string             `json:"defaultRule"`
	ContributionDueHours   *int                `json:"contributionDueHours"`
}

func (s *Server) createEqubGroup(c *gin.Context) {
	var req equbGroupRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"name", req.Name != nil}, required{"contributionSantim", req.ContributionSantim != nil},
		required{"maxMembers", req.MaxMembers != nil}, required{"payoutOrder", req.PayoutOrder != nil},
		required{"escrowAccount", req.EscrowAccount != nil}); e != nil {
		writeError(c, e)
		return
	}
	in := equb.GroupInput{Name: *req.Name, ContributionSantim: *req.ContributionSantim, MaxMembers: *req.MaxMembers,
		PayoutOrder: *req.PayoutOrder, EscrowPartner: req.EscrowAccount.Partner, EscrowAccountNumber: req.EscrowAccount.AccountNumber}
	if req.AllowChangesAfterStart != nil {
		in.AllowChangesAfterStart = *req.AllowChangesAfterStart
	}
	if req.DefaultRule != nil {
		if *req.DefaultRule == "" { // "" is not WAIT at the edge: the field is an enum
			writeError(c, fieldError(&field.Error{Field: "defaultRule", Problem: "must be WAIT or PAY_COLLECTED"}))
			return
		}
		in.DefaultRule = *req.DefaultRule
	}
	if req.ContributionDueHours != nil {
		if *req.ContributionDueHours == 0 {
			writeError(c, fieldError(&field.Error{Field: "contributionDueHours", Problem: fmt.Sprintf("must be from %d to %d", equb.MinDueHours, equb.MaxDueHours)}))
			return
		}
		in.ContributionDueHours = *req.ContributionDueHours
	}
	if err := in.Check(); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := (lending.Account{Partner: in.EscrowPartner, AccountNumber: in.EscrowAccountNumber}).Check("escrowAccount"); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if e := s.checkEscrow(c, in.EscrowPartner, in.EscrowAccountNumber); e != nil {
		writeError(c, e)
		return
	}
	g, ok := inTenantAudited(s, c, "CreateEqubGroup", "EqubGroup", "", func(ctx context.Context, tx db.BunTx) (equb.Group, error) {
		return equb.CreateGroup(ctx, tx, in, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toEqubGroupJSON(g))
	}
}

// checkEscrow verifies the escrow account at the partner through the gateway's account lookup
// (a group's creation, and each cycle's binding before it is ACTIVE).
func (s *Server) checkEscrow(c *gin.Context, partner, account string) *Error {
	return s.checkPartnerAccount(c, accountCheck{Partner: partner, AccountNumber: account, Field: "escrowAccount", What: "the escrow account",
		PartnerUnknown: "EQUB_ESCROW_PARTNER_UNKNOWN", NotFound: "EQUB_ESCROW_ACCOUNT_NOT_FOUND"})
}

func (s *Server) listEqubGroups(c *gin.Context) {
	limit, cursor, e := pageParams(c.Query("limit"), c.Query("cursor"))
	if e != nil {
		writeError(c, e)
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]equb.Group, error) {
		return equb.ListGroups(ctx, tx, "", db.Page{After: cursor, Limit: limit + 1})
	})
	if ok {
		answerEqubGroups(c, rows, limit)
	}
}

func answerEqubGroups(c *gin.Context, rows []equb.Group, limit int) {
	rows, next := pageOf(rows, limit, func(g equb.Group) string { return g.ID })
	out := equbGroupListJSON{Items: make([]equbGroupJSON, 0, len(rows)), NextCursor: next}
	for _, g := range rows {
		out.Items = append(out.Items, toEqubGroupJSON(g))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getEqubGroup(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (equbGroupJSON, error) {
		g, err := equb.GetGroup(ctx, tx, id)
		if err != nil {
			return equbGroupJSON{}, err
		}
		ms, err := equb.Members(ctx, tx, id)
		if err != nil {
			return equbGroupJSON{}, err
		}
		j := toEqubGroupJSON(g)
		j.Members = make([]equbMemberJSON, 0, len(ms))
		for _, m := range ms {
			j.Members = append(j.Members, toEqubMemberJSON(m))
		}
		return j, nil
	})
	if ok {
		c.JSON(http.StatusOK, out)
	}
}

func (s *Server) joinEqubGroup(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	m, ok := inTenantAudited(s, c, "JoinEqubGroup", "EqubGroup", id, func(ctx context.Context, tx db.BunTx) (equb.Membership, error) {
		emp, err := equb.LinkedEmployee(ctx, tx, user)
		if err != nil {
			return equb.Membership{}, err
		}
		return equb.Join(ctx, tx, id, emp, user, s.now())
	})
	if ok {
		c.JSON(http.StatusCreated, toEqubMemberJSON(m))
	}
}

type equbLeaveRequest struct {
	AcknowledgeSettlement *bool `json:"acknowledgeSettlement"`
}

func (s *Server) leaveEqubGroup(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req equbLeaveRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	ack := req.AcknowledgeSettlement != nil && *req.AcknowledgeSettlement
	user := callerOf(c).User.ID
	m, ok := inTenantAudited(s, c, "LeaveEqubGroup", "EqubGroup", id, func(ctx context.Context, tx db.BunTx) (equb.Membership, error) {
		return equb.Leave(ctx, tx, id, user, ack, s.now())
	})
	if ok {
		c.JSON(http.StatusOK, toEqubMemberJSON(m))
	}
}

// equbMemberAccountJSON answers take-account: the membership's account.
type equbMemberAccountJSON struct {
	MembershipID  string            `json:"membershipId"`
	GroupID       string            `json:"groupId"`
	PayoutAccount payoutAccountJSON `json:"payoutAccount"`
}

func (s *Server) takeEqubAccount(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	user := callerOf(c).User.ID
	m, ok := inTenantAudited(s, c, "TakeEqubAccount", "EqubGroup", id, func(ctx context.Context, tx db.BunTx) (equb.Membership, error) {
		return equb.TakeAccount(ctx, tx, id, user, s.now())
	})
	if ok {
		c.JSON(http.StatusOK, equbMemberAccountJSON{MembershipID: m.ID, GroupID: m.GroupID, PayoutAccount: payoutAccountJSON{
			Partner: m.PayoutPartner, AccountNumber: m.PayoutAccountNumber, HolderName: m.PayoutHolderName}})
	}
}

// --- cycles ---

func (s *Server) openEqubCycle(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	g, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (equb.Group, error) {
		return equb.GetGroup(ctx, tx, id)
	})
	if !ok {
		return
	}
	// The binding is ACTIVE only once the partner has confirmed the escrow account, now.
	if e := s.checkEscrow(c, g.EscrowPartner, g.EscrowAccountNumber); e != nil {
		writeError(c, e)
		return
	}
	verified := s.now()
	seed, err := equb.NewSeed()
	if err != nil {
		writeError(c, err)
		return
	}
	out, ok := inTenantAudited(s, c, "OpenEqubCycle", "EqubGroup", id, func(ctx context.Context, tx db.BunTx) (equb.CycleView, error) {
		cy, b, err := equb.OpenCycle(ctx, tx, id, seed, verified, s.now())
		return equb.CycleView{Cycle: cy, Binding: &b}, err
	})
	if ok {
		c.JSON(http.StatusCreated, toEqubCycleJSON(out))
	}
}

func (s *Server) listEqubCycles(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	organizer := cl.Platform || cl.Access.Role.AtLeast(orgs.Admin)
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]equb.CycleView, error) {
		if _, err := equb.GetGroup(ctx, tx, id); err != nil {
			return nil, err
		}
		if !organizer {
			if _, err := equb.ActiveMember(ctx, tx, id, cl.User.ID); err != nil {
				return nil, equb.RefusalError(equb.CodeGroupNotFound) // not theirs to see: 404
			}
		}
		return equb.ListCycles(ctx, tx, id)
	})
	if !ok {
		return
	}
	out := equbCycleListJSON{Items: make([]equbCycleJSON, 0, len(rows))}
	for _, v := range rows {
		out.Items = append(out.Items, toEqubCycleJSON(v))
	}
	c.JSON(http.StatusOK, out)
}

// --- the caller's own ---

type equbMoneyJSON struct {
	ID           string    `json:"id"`
	GroupID      string    `json:"groupId"`
	CycleID      string    `json:"cycleId"`
	MembershipID string    `json:"membershipId"`
	AmountSantim int64     `json:"amountSantim"`
	Status       string    `json:"status"`
	WorkflowID   string    `json:"workflowId"`
	LedgerTxID   *string   `json:"ledgerTxId"`
	TransferID   *string   `json:"transferId"`
	FailureCode  *string   `json:"failureCode"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

func contributionJSON(m equb.Contribution) equbMoneyJSON {
	return equbMoneyJSON{ID: m.ID, GroupID: m.GroupID, CycleID: m.CycleID, MembershipID: m.MembershipID, AmountSantim: m.AmountSantim,
		Status: m.Status, WorkflowID: m.WorkflowID, LedgerTxID: m.LedgerTxID, TransferID: m.TransferID, FailureCode: m.FailureCode,
		CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
}

func payoutJSON(m equb.Payout) equbMoneyJSON {
	return equbMoneyJSON{ID: m.ID, GroupID: m.GroupID, CycleID: m.CycleID, MembershipID: m.MembershipID, AmountSantim: m.AmountSantim,
		Status: m.Status, WorkflowID: m.WorkflowID, LedgerTxID: m.LedgerTxID, TransferID: m.TransferID, FailureCode: m.FailureCode,
		CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
}

type equbMoneyListJSON struct {
	Items      []equbMoneyJSON `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

// myEqub reads a page of the caller's own rows in their employee's organization (filtered by
// their own membership).
func myEqub[T any](s *Server, c *gin.Context, list func(ctx context.Context, tx db.BunTx, userID string, p db.Page) ([]T, error)) ([]T, int, bool) {
	limit, cursor, e := pageParams(c.Query("limit"), c.Query("cursor"))
	if e != nil {
		writeError(c, e)
		return nil, 0, false
	}
	tenant, _, ok := s.myEmployee(c)
	if !ok {
		return nil, 0, false
	}
	user := callerOf(c).User.ID
	rows, err := asEmployee(s, c, tenant, func(ctx context.Context, tx db.BunTx) ([]T, error) {
		return list(ctx, tx, user, db.Page{After: cursor, Limit: limit + 1})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return nil, 0, false
	}
	return rows, limit, true
}

func (s *Server) myEqubGroups(c *gin.Context) {
	if rows, limit, ok := myEqub(s, c, equb.ListGroups); ok {
		answerEqubGroups(c, rows, limit)
	}
}

func answerEqubMoney[T any](c *gin.Context, rows []T, limit int, id func(T) string, js func(T) equbMoneyJSON) {
	rows, next := pageOf(rows, limit, id)
	out := equbMoneyListJSON{Items: make([]equbMoneyJSON, 0, len(rows)), NextCursor: next}
	for _, r := range rows {
		out.Items = append(out.Items, js(r))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) myEqubContributions(c *gin.Context) {
	if rows, limit, ok := myEqub(s, c, equb.UserContributions); ok {
		answerEqubMoney(c, rows, limit, func(m equb.Contribution) string { return m.ID }, contributionJSON)
	}
}

func (s *Server) myEqubPayouts(c *gin.Context) {
	if rows, limit, ok := myEqub(s, c, equb.UserPayouts); ok {
		answerEqubMoney(c, rows, limit, func(m equb.Payout) string { return m.ID }, payoutJSON)
	}
}
