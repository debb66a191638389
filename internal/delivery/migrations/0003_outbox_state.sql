-- The outbox is a rehearsal: a message written there reached nobody, so its row is in state
-- outbox, not sent, and an SMTP server configured later still owes the occurrence to its
-- recipients. Rows written before this state existed are read the same way.
UPDATE deliveries SET state = 'outbox' WHERE transport = 'outbox' AND state = 'sent';
