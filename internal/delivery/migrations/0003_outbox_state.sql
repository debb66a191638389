-- The outbox is a rehearsal: a message written there reached nobody, so its row is in state
-- outbox, not sent, and an SMTP server configured later still owes the occurrence to its
-- recipients. Rows written before this state existed are read the same way. A row's state is
-- now one of: sending, sent, outbox, failed (nobody has it), refused (a 5xx answer), unknown
-- (the whole message went and no answer came, or a crash while sending).
UPDATE deliveries SET state = 'outbox' WHERE transport = 'outbox' AND state = 'sent';
