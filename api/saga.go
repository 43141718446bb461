package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/temporalerr"
	"github.com/wagerail/wagerail/workflows"
)

// The start-and-wait of every money saga behind an Idem route: one Update-with-Start starts the
// workflow the Idempotency-Key names (or attaches to it) and waits for its "accepted" update,
// which completes once the saga has passed its gates and set the money moving, or with a refusal
// (an ApplicationError whose type is the API code). The call answers
//
//   - the update's answer (202 while the saga works on, or 200 when it is done);
//   - the refusal's code with the status and public message of the domain's table of codes (the
//     saga's own message may carry internal detail);
//   - 202 with the pending body when the wait runs out (a slow partner: the saga resolves later);
//   - from the workflow's result when the key's saga has already closed (the idempotency record
//     expired or was never stored: a crash between the saga's start and the stored answer).
//
// Before anything starts, the pre-check refuses what the saga would refuse for a database read
// instead of a workflow — except when the target is owned by the very saga this key names: then
// the answer is that saga's (attached, or its result), never the pre-check's refusal. A client
// retrying its own key after a crash thus gets what the first call would have had.

// DefaultSagaWait bounds how long a saga call waits for the saga's "accepted" update. The gates
// answer in milliseconds; a partner that does not answer in time leaves the saga retrying, and the
// call answers 202 with the pending body (the spec's "fails fast into a pending state that
// resolves later").
const DefaultSagaWait = 15 * time.Second

// sagaCall is one start-and-wait: A is the update's answer, R the workflow's result.
type sagaCall[A, R any] struct {
	// Workflow is the registered workflow name, Input its input, BusinessKey the search attribute
	// operators find the saga by (the target's id).
	Workflow    string
	Input       any
	BusinessKey string
	// WorkflowID, when set, is the saga's id instead of the Idempotency-Key's: a saga that is
	// one per target (a payroll run's disbursement), which every key of every caller reaches.
	WorkflowID string
	// RestartFailed lets a new saga start under the id after a failed one (a saga that fails
	// when it is refused, so that its target can be tried again once the cause is fixed); a
	// completed saga's id is never reused.
	RestartFailed bool
	// RestartClosed lets a new saga start under the id after any closed run (a saga that is one
	// per target and reads its target first, so a run after a completed one finds the target
	// done and answers it again).
	RestartClosed bool
	// Update and UpdateID name the saga's "accepted" update (a fixed id: every call of one key
	// is the same update and gets the same answer).
	Update, UpdateID string
	// UpdateArgs are the update's arguments (none for an "accepted" update; a dispute decision
	// carries the decision).
	UpdateArgs []any
	// Wait bounds the wait for the update (0: Deps.DisburseWait, else DefaultSagaWait).
	Wait time.Duration
	// Precheck, when set, reads the target before anything starts (wfID is this key's workflow
	// id). Its error is the refusal of a new saga (an error s.answer maps and audits), ignored
	// when the answer names this key's workflow as the target's owner.
	Precheck func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error)
	// Refused answers the saga's refusal (the update's ApplicationError, whose Type is the API
	// code): the error to send, with its public message. ok is false for an error that is not one
	// of the saga's refusals (a failure: 500).
	Refused func(app *temporal.ApplicationError) (e *Error, ok bool)
	// KeyReused, when set, answers a refusal instead when the saga the key names was started for
	// another target than BusinessKey (sagaNamesAnother): that saga refused its own target, not
	// this call's (its idempotency record has expired since).
	KeyReused *Error
	// Accepted is the answer of the update's result (202 while the saga works on, 200 when it is
	// already done, as the route documents).
	Accepted func(wfID string, a A) (status int, body any)
	// Pending is the 202 body when the wait ran out with the saga still at work.
	Pending func(wfID string) any
	// NoPendingAnswer: a wait that runs out before the saga answered is never 202 (the saga may
	// still refuse: a savings withdrawal decides whether the balance covers it under the goal's
	// lock), but 503 DECISION_PENDING, which is not stored: the client's retry with its key
	// reaches the same saga and gets its answer.
	NoPendingAnswer bool
	// Closed answers from a closed run's result: a status and body, or the refusal (an *Error)
	// it ended with; any other error is a failure (500).
	Closed func(wfID string, r R) (status int, body any, err error)
	// LogAttrs are added to the call's log lines (e.g. the target's id).
	LogAttrs []any
}

// sagaPrecheck is what a pre-check found.
type sagaPrecheck struct {
	// Owner is the workflow id of the saga that owns the target ("" when none does).
	Owner string
	// Done, when set, answers the call without starting a saga: the target already shows this
	// call's outcome. With an error too, the error answers a new call and Done answers only a
	// call whose wait on the saga ran out (ownsTarget): a saga that is one per target, not per
	// key, finished with a later key's call as a new request.
	Done *sagaAnswer
}

// sagaAnswer is a status and a JSON body.
type sagaAnswer struct {
	Status int
	Body   any
}

// runSaga serves one saga call on an Idem route (the idempotency gate has put the key's scope in
// the request context).
func runSaga[A, R any](s *Server, c *gin.Context, call sagaCall[A, R]) {
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "this route needs Temporal"))
		return
	}
	tenant := callerOf(c).Tenant
	wfID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		writeError(c, errors.New("saga call: no idempotency scope on an Idem route"))
		return
	}
	if call.WorkflowID != "" {
		wfID = call.WorkflowID
	}
	if call.Precheck != nil {
		var done *sagaAnswer
		err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
			p, err := call.Precheck(ctx, tx, wfID)
			if p.Owner != "" && p.Owner == wfID {
				return nil // this key's saga owns the target: its answer is the answer
			}
			done = p.Done
			return err
		})
		if err != nil {
			s.answer(c, tenant, err)
			return
		}
		if done != nil {
			c.JSON(done.Status, done.Body)
			return
		}
	}
	wait := s.sagaWait(call.Wait)
	tc := s.deps.Temporal
	opts := workflows.StartOptions(wfID, s.taskQueue(), tenant, call.BusinessKey)
	if call.RestartFailed {
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	}
	if call.RestartClosed {
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
	defer cancel()
	var acc A
	started, err := updateWithStart(ctx, tc, func() client.UpdateWithStartWorkflowOptions {
		return client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: tc.NewWithStartWorkflowOperation(opts, call.Workflow, call.Input),
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateID: call.UpdateID, UpdateName: call.Update, Args: call.UpdateArgs, WaitForStage: client.WorkflowUpdateStageAccepted,
			},
		}
	}, &acc)
	if err == nil {
		c.JSON(call.Accepted(wfID, acc))
		return
	}
	logAttrs := append([]any{"workflow", call.Workflow, "workflow_id", wfID, "request_id", requestID(c)}, call.LogAttrs...)
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &app):
		e, ok := call.Refused(app)
		if !ok {
			s.deps.Log.Error("saga call: the saga failed", append(logAttrs, "error", err)...)
			writeError(c, err)
			return
		}
		if call.KeyReused != nil && s.sagaNamesAnother(c, call.BusinessKey) {
			e = call.KeyReused
		}
		s.sagaRefused(c, e, logAttrs)
	case ctx.Err() != nil && c.Request.Context().Err() == nil:
		// The wait ran out. A saga that was started is still working (a slow or unreachable
		// partner): it resolves later and the caller follows it on the target's GET. One that is
		// not known to have started (the start itself ran out of time on a loaded server) must
		// not be answered 202: that answer would be stored under the key and nothing would ever
		// run. 503 is not stored, so the client's retry with its key starts or reaches the saga.
		owned, done := s.ownsTarget(c, call.Precheck, wfID)
		if done != nil {
			c.JSON(done.Status, done.Body) // the saga finished with the target meanwhile
			return
		}
		if !started && !owned && !s.sagaStarted(c.Request.Context(), wfID) {
			s.deps.Log.Warn("saga call: the saga was not known to be started when the wait ran out", logAttrs...)
			writeError(c, NewError(http.StatusServiceUnavailable, "TEMPORAL_UNAVAILABLE",
				"the work could not be started in time; retry with the same Idempotency-Key"))
			return
		}
		if call.NoPendingAnswer {
			s.deps.Log.Warn("saga call: the saga had not decided when the wait ran out", logAttrs...)
			writeError(c, errDecisionPending)
			return
		}
		s.deps.Log.Warn("saga call: answered before the saga accepted", logAttrs...)
		c.JSON(http.StatusAccepted, call.Pending(wfID))
	case isWorkflowClosed(err):
		closedSaga(s, c, call, wfID, wait, logAttrs)
	default:
		s.deps.Log.Error("saga call: Temporal failed", append(logAttrs, "error", err)...)
		writeError(c, err)
	}
}

// updateWithStart sends the Update-with-Start (a new start operation each time: one is used
// once) and waits for the update's result while ctx lasts. A wait the server ended before ctx did
// (WorkflowUpdateServiceTimeoutOrCanceledError: its long poll has its own deadline), an update
// the server could not deliver yet (WorkflowNotReady: the workflow task failed and is being
// retried, on a loaded worker) and a transient answer of the server (temporalerr.Transient) are not
// answers: the same update (its fixed id) is asked again after a pause, until it answers or ctx
// ends. Asking again is safe: the start reaches the one workflow of its id and the update's fixed
// id makes every ask the same update.
//
// The Update-with-Start returns once the update is accepted (WorkflowUpdateStageAccepted), and the
// handle then waits for its outcome: started reports that the workflow is known to exist (the
// handle came back: the start or the running workflow took the update), so a wait that runs out
// afterwards is a saga at work, not one that never started — a loaded server whose Describe
// does not answer in time no longer turns a running saga into 503 TEMPORAL_UNAVAILABLE.
func updateWithStart(ctx context.Context, tc client.Client, opts func() client.UpdateWithStartWorkflowOptions, out any) (started bool, err error) {
	for pause := 200 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		var h client.WorkflowUpdateHandle
		h, err = tc.UpdateWithStartWorkflow(ctx, opts())
		if err == nil {
			started = true
			err = h.Get(ctx, out)
		}
		var polled *client.WorkflowUpdateServiceTimeoutOrCanceledError
		var notReady *serviceerror.WorkflowNotReady
		if err == nil || ctx.Err() != nil || !(errors.As(err, &polled) || errors.As(err, &notReady) || temporalerr.Transient(err)) {
			return started, err
		}
		select {
		case <-ctx.Done():
			return started, err
		case <-time.After(pause):
		}
	}
}

// errDecisionPending answers a NoPendingAnswer call whose saga had not decided in time.
var errDecisionPending = NewError(http.StatusServiceUnavailable, "DECISION_PENDING",
	"the request is still being decided; retry with the same Idempotency-Key for its answer")

// sagaStartedWait bounds sagaStarted's look-up.
const sagaStartedWait = 5 * time.Second

// sagaStarted reports whether the workflow wfID exists (running or closed); false when it does
// not or when Temporal does not say in time (a transient answer is asked again meanwhile).
func (s *Server) sagaStarted(ctx context.Context, wfID string) bool {
	ctx, cancel := context.WithTimeout(ctx, sagaStartedWait)
	defer cancel()
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		_, err := s.deps.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
		if err == nil {
			return true
		}
		if !temporalerr.Transient(err) || ctx.Err() != nil { // a transient answer (a busy server) is asked again
			s.deps.Log.Warn("saga call: the saga's start could not be confirmed", "workflow_id", wfID, "error", err)
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
	}
}

// ownsTarget asks the pre-check again once a wait ran out (a database read): owned when the
// target is held by the saga wfID (it has started), done when the target now shows this call's
// outcome (the saga finished with it). Either way the saga is known to have run even when
// Temporal is too loaded to say so in time: 20 racing collections of one instalment had racers
// whose Update-with-Start and Describe both ran out of time answered 503 while the saga they
// asked for held, then had collected, the instalment.
func (s *Server) ownsTarget(c *gin.Context, precheck func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error), wfID string) (owned bool, done *sagaAnswer) {
	if precheck == nil {
		return false, nil
	}
	_ = s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		p, _ := precheck(ctx, tx, wfID)
		owned, done = p.Owner != "" && p.Owner == wfID, p.Done
		return errReadOnly // a read: nothing the pre-check did is kept
	})
	return owned, done
}

var errReadOnly = errors.New("read only")

// sagaRefused sends a saga's refusal.
func (s *Server) sagaRefused(c *gin.Context, e *Error, logAttrs []any) {
	s.deps.Log.Info("saga call refused", append(logAttrs, "code", e.Code)...)
	writeError(c, e)
}

// isWorkflowClosed reports an update that found its workflow closed: the start was refused
// because the id was used by a run that has ended (REJECT_DUPLICATE), or the update reached a run
// that had already completed.
func isWorkflowClosed(err error) bool {
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	var nf *serviceerror.NotFound
	return errors.As(err, &started) || errors.As(err, &nf)
}

// closedSaga answers from the closed saga's result (following its continued runs).
func closedSaga[A, R any](s *Server, c *gin.Context, call sagaCall[A, R], wfID string, wait time.Duration, logAttrs []any) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
	defer cancel()
	var res R
	if err := s.deps.Temporal.GetWorkflow(ctx, wfID, "").Get(ctx, &res); err != nil {
		s.deps.Log.Error("saga call: the closed saga's result could not be read", append(logAttrs, "error", err)...)
		writeError(c, err)
		return
	}
	status, body, err := call.Closed(wfID, res)
	var e *Error
	switch {
	case errors.As(err, &e):
		s.sagaRefused(c, e, logAttrs)
	case err != nil:
		s.deps.Log.Error("saga call: the closed saga's result is no answer", append(logAttrs, "error", err)...)
		writeError(c, err)
	default:
		c.JSON(status, body)
	}
}

// sagaWait is how long a call waits for a saga's answer: wait, else Deps.DisburseWait, else
// DefaultSagaWait.
func (s *Server) sagaWait(wait time.Duration) time.Duration {
	if wait <= 0 {
		wait = s.deps.DisburseWait
	}
	if wait <= 0 {
		wait = DefaultSagaWait
	}
	return wait
}

func (s *Server) taskQueue() string {
	if s.deps.TaskQueue != "" {
		return s.deps.TaskQueue
	}
	return workflows.DefaultTaskQueue
}

// A key's saga answers a call from what it recorded (the pre-check compares that with the call),
// and otherwise from Temporal: its "accepted" update has a fixed id, so a run that closed long ago
// still answers that update — with its own target's answer, or its refusal — and a closed run
// its result. The routes compare the target these name with the call's, as the repayment routes
// do: a saga that refused another target recorded nothing the pre-check could find.

// keyReusedAnswer is e as the status and body writeError sends, for an Accepted answer.
func keyReusedAnswer(c *gin.Context, e *Error) (int, any) {
	return e.Status, envelope{Error: envelopeBody{Code: e.Code, Message: e.Message, RequestID: requestID(c), Details: e.Details}}
}

// sagaNamesAnother reports whether the saga the call's key names was started for another target
// than target (its BusinessKey search attribute, workflows.StartOptions): asked when the saga
// refused the call, since the refusal names no target. False when Temporal does not say.
func (s *Server) sagaNamesAnother(c *gin.Context, target string) bool {
	wfID, ok := idempotency.WorkflowIDFrom(c.Request.Context())
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), sagaStartedWait)
	defer cancel()
	resp, err := s.deps.Temporal.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		s.deps.Log.Warn("saga call: the saga's target could not be read", "workflow_id", wfID, "error", err)
		return false
	}
	p := resp.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[workflows.BusinessKeyAttribute.GetName()]
	var key string
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &key) != nil {
		return false
	}
	return key != "" && key != target
}
