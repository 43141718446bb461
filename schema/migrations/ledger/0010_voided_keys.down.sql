DROP TRIGGER transactions_key_not_voided ON ledger.transactions;
DROP FUNCTION ledger.transactions_key_not_voided();
DROP FUNCTION ledger.key_lock_key(text, text);
DROP FUNCTION ledger.key_lock_class();
DROP TABLE ledger.voided_keys;
