//! Pages served over HTTP. `index.html` is the daemon's live page (served by `publish::http`);
//! [`games`] holds the grid games' pages and their HTTP routes, served alone by
//! `boardwatch play` and mountable next to the boards in the daemon.

pub mod games;
