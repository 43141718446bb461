package workflows

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// A run begun after ewaOneVersionChange asks one version: its recorded history (which
// TestEwaDisburseReplay holds the code to) has one version marker and one upsert of the
// TemporalChangeVersion search attribute, where the run before it had two of each; its steps
// are ewaFewerStepsChange's, the seven local activities.
func TestEwaDisburseOneVersionHistoryAsksOneVersion(t *testing.T) {
	markers, upserts := historyMarkers(t, ewaDisburseOneVersionHistoryFile)
	require.Equal(t, map[string]int{"Version": 1, "LocalActivity": 7}, markers)
	require.Equal(t, 1, upserts)
}

// A run started with EwaShapeNoVersion (as the API starts every disbursement) asks no version:
// its recorded history has the same seven local activities and no version marker, and upserts
// no TemporalChangeVersion search attribute.
func TestEwaDisburseInputShapeHistoryAsksNoVersion(t *testing.T) {
	markers, upserts := historyMarkers(t, ewaDisburseInputShapeHistoryFile)
	require.Equal(t, map[string]int{"LocalActivity": 7}, markers)
	require.Zero(t, upserts)
}

// A run started with EwaShapeLeaveTimer (the API's) asks no version either, and leaves the
// settlement wait's lookup timer pending when the bank's signal ends the wait: a timer started,
// none cancelled, the run completed.
func TestEwaDisburseLeaveTimerHistoryCancelsNoTimer(t *testing.T) {
	markers, upserts := historyMarkers(t, ewaDisburseLeaveTimerHistoryFile)
	require.Equal(t, map[string]int{"LocalActivity": 7}, markers)
	require.Zero(t, upserts)
	events := map[enumspb.EventType]int{}
	for _, e := range readHistory(t, ewaDisburseLeaveTimerHistoryFile).GetEvents() {
		events[e.GetEventType()]++
	}
	require.Equal(t, 1, events[enumspb.EVENT_TYPE_TIMER_STARTED])
	require.Zero(t, events[enumspb.EVENT_TYPE_TIMER_CANCELED])
	require.Equal(t, 1, events[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED])
	require.Equal(t, 1, events[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED])
}

// historyMarkers counts a recorded history's markers by name and its search attribute upserts.
func historyMarkers(t *testing.T, file string) (markers map[string]int, upserts int) {
	t.Helper()
	markers = map[string]int{}
	for _, e := range readHistory(t, file).GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			markers[e.GetMarkerRecordedEventAttributes().GetMarkerName()]++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			upserts++
		}
	}
	return markers, upserts
}

// readHistory reads a recorded history.
func readHistory(t *testing.T, file string) *historypb.History {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	return hist
}
