DROP INDEX app.ewa_requests_book_status;
DROP INDEX app.loans_book_status;
