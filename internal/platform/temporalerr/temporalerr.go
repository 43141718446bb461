// Package temporalerr classifies the Temporal server's answers that say nothing about the
// workflow asked for: the one definition the API's saga calls and the bank-callback applier use
// to ask again instead of failing the caller.
package temporalerr

import (
	"errors"

	"go.temporal.io/api/serviceerror"
)

// Transient reports an answer of the Temporal server that says nothing about the workflow: the
// server was busy (Unavailable, ResourceExhausted, its own DeadlineExceeded), a racing start or
// a run closing under the call asked for the operation again (Aborted, MultiOperationAborted), or
// its namespace registry could not read the namespace in time (NamespaceNotFound,
// NamespaceUnavailable: the registry answers a failed persistence read of a namespace it has not
// cached as "not found"). Seen under load on racing Update-with-Starts of one workflow id.
func Transient(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		exhausted   *serviceerror.ResourceExhausted
		deadline    *serviceerror.DeadlineExceeded
		aborted     *serviceerror.Aborted
		multiAbort  *serviceerror.MultiOperationAborted
		nsNotFound  *serviceerror.NamespaceNotFound
		nsUnavail   *serviceerror.NamespaceUnavailable
	)
	return errors.As(err, &unavailable) || errors.As(err, &exhausted) || errors.As(err, &deadline) ||
		errors.As(err, &aborted) || errors.As(err, &multiAbort) || errors.As(err, &nsNotFound) || errors.As(err, &nsUnavail)
}
