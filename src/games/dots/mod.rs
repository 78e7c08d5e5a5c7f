//! Dots (Kropki): rules, enclosures, records and computer players.
