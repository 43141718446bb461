package orgs

// KYBBacklogSQL is the work queue's statement, for the test that it reads through its index.
const KYBBacklogSQL = kybBacklogSQL
