package workflows

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
)

// FanoutItemStatus answers where the item with key stands in the fan-out fanoutID, running or
// closed: its batch's outcome for it, or QUEUED while its batch has not started. It asks the
// fan-out where the item is, then the batch (two queries; nothing is read from a database).
func FanoutItemStatus(ctx context.Context, c client.Client, fanoutID, key string) (FanoutItemOutcome, error) {
	var loc FanoutItemLocation
	v, err := c.QueryWorkflow(ctx, fanoutID, "", FanoutItemQuery, key)
	if err != nil {
		return FanoutItemOutcome{}, fmt.Errorf("fanout item status: %w", err)
	}
	if err := v.Get(&loc); err != nil {
		return FanoutItemOutcome{}, fmt.Errorf("fanout item status: %w", err)
	}
	if loc.BatchState == FanoutBatchQueued {
		return FanoutItemOutcome{Index: loc.Index, Key: key, Reference: loc.Reference, Status: FanoutItemQueued}, nil
	}
	v, err = c.QueryWorkflow(ctx, loc.BatchWorkflowID, "", FanoutBatchItemsQuery)
	if err != nil {
		return FanoutItemOutcome{}, fmt.Errorf("fanout item status: batch %s: %w", loc.BatchWorkflowID, err)
	}
	var items []FanoutItemOutcome
	if err := v.Get(&items); err != nil {
		return FanoutItemOutcome{}, fmt.Errorf("fanout item status: batch %s: %w", loc.BatchWorkflowID, err)
	}
	for _, it := range items {
		if it.Index == loc.Index {
			return it, nil
		}
	}
	return FanoutItemOutcome{}, fmt.Errorf("fanout item status: batch %s has no item %d", loc.BatchWorkflowID, loc.Index)
}
