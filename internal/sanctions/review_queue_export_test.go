package sanctions

// BacklogSQL is the work queue's statement, for the test that it reads through its index.
const BacklogSQL = backlogSQL
