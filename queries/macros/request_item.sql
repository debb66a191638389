-- request_item(description, link, name): what a payment request asks payment for, as a report's
-- Item column shows it: its description as one line of text (HTML tags and line breaks become
-- spaces), cut at 80 characters, else its link, else its name (whom it was made out to; the
-- service's name of a payment request is the payer's).
CREATE OR REPLACE MACRO request_item(description, link, name) AS
coalesce(nullif(left(trim(regexp_replace(regexp_replace(description, '<[^>]*>', ' ', 'g'), '\s+', ' ', 'g')), 80), ''),
         link, name);
