package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// DefaultTaskQueue is the task queue the worker serves and the API starts sagas on, unless
// configured otherwise.
const DefaultTaskQueue = "wagerail"

// The custom search attributes every Wagerail namespace registers (internal/platform/devtemporal for the
// embedded server, docker-compose.yml's temporal-setup for a cluster). Operators find a saga in
// the Web UI with, e.g., TenantId = "t1" AND BusinessKey = "ewa:req-42".
var (
	TenantIDAttribute    = temporal.NewSearchAttributeKeyKeyword("TenantId")
	BusinessKeyAttribute = temporal.NewSearchAttributeKeyKeyword("BusinessKey")
)

// StartOptions are the start options of every saga. id is the workflow id the idempotency block
// derived from (tenant, route, Idempotency-Key), so starting twice with the same key is the same
// workflow: while it runs the second start attaches to it (conflict policy USE_EXISTING), and
// once it has closed the id is never reused (REJECT_DUPLICATE) and the start attaches to the
// closed run, whose result is the answer to the replayed request. Neither is an error to the
// caller (WorkflowExecutionErrorWhenAlreadyStarted is false).
//
// tenantID and businessKey become the TenantId and BusinessKey search attributes; an empty one is
// left unset (a system job covering many tenants has no single tenant).
func StartOptions(id, taskQueue, tenantID, businessKey string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                taskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowExecutionErrorWhenAlreadyStarted: false,
		TypedSearchAttributes:                    searchAttributes(tenantID, businessKey),
	}
}

func searchAttributes(tenantID, businessKey string) temporal.SearchAttributes {
	var updates []temporal.SearchAttributeUpdate
	if tenantID != "" {
		updates = append(updates, TenantIDAttribute.ValueSet(tenantID))
	}
	if businessKey != "" {
		updates = append(updates, BusinessKeyAttribute.ValueSet(businessKey))
	}
	return temporal.NewSearchAttributes(updates...)
}
