// Package activities holds every step that touches the world for the workflows: methods on structs
// built with their dependencies (ledger client, gateway client, stores). Domain errors become
// temporal.ApplicationError with a stable type in one place. It must never import workflows.
package activities
