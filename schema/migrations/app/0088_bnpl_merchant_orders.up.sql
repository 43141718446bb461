-- A merchant's orders (GET /api/bnpl/merchant/orders; internal/bnpl/orders.go): the agreements
-- bought from it, read under the merchant_reads_agreements policy (0048) and paged by id. Without
-- this index every page scanned the table.
CREATE INDEX bnpl_agreements_merchant ON app.bnpl_agreements (merchant_id, id);
