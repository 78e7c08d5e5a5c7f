// Projector mode, shared by every grid-game page (include with projector.css).
//
// Projector mode: full screen, high contrast (body.projector), the grid as large as the screen
// allows, and a corner pin: the four corners of the grid can be dragged to where they must be
// drawn so that a projector standing at an angle shows a true rectangle on the table. The grid
// is then drawn through the homography that takes its rectangle to those four points (a CSS
// matrix3d). The corners are kept per screen, in localStorage under a key made of the screen's
// size, as fractions of the window.
//
// A page calls Projector.attach(stage, {cols, rows}) once, Projector.setGrid(cols, rows) when
// its grid changes, and binds buttons or keys to toggle(), togglePin() and resetPin(). The
// stage's cells take their size from the CSS variable --cell, which projector mode sets.
//
// Camera taps: a page calls Projector.touch({game, onTap(col, row)}). In projector mode it then
// follows its screen (`?screen=NAME`, else `table`) on the server: it says which game and grid
// it shows, draws the fingertip's cell with a ring that fills while the finger dwells, hands
// each tap to onTap as a click on that cell, and shows whether camera input is on. Key K (or
// the pin panel's button) projects the calibration pattern until the camera has found it.
(function () {
  'use strict';
  const MARGIN = 24;        // px around the grid in projector mode
  const BAR = 72;           // px reserved at the top for the page's turn bar
  let stage = null;
  let grid = { cols: 1, rows: 1 };
  let enabled = false;
  let pinning = false;
  let corners = null;       // [[x, y] x 4] as fractions of the window: TL, TR, BR, BL
  let handles = [];
  let panel = null;         // what to do while pinning: reset, done
  let box = null;           // the stage's untransformed rectangle: {left, top, width, height}
  const listeners = [];
  let touch = null;         // {game, onTap, source, status, ring, pattern, screen}

  function storageKey() {
    return 'boardwatch.cornerpin.' + screen.width + 'x' + screen.height;
  }

  function load() {
    try {
      const saved = JSON.parse(localStorage.getItem(storageKey()) || 'null');
      if (Array.isArray(saved) && saved.length === 4 && saved.every(p => Array.isArray(p) && p.length === 2 && p.every(Number.isFinite))) {
        return saved;
      }
    } catch (e) { /* a damaged entry counts as none */ }
    return null;
  }

  function save() {
    if (corners) localStorage.setItem(storageKey(), JSON.stringify(corners));
    else localStorage.removeItem(storageKey());
  }

  // Solves the linear system a x = b (n x n) by Gaussian elimination with partial pivoting.
  function solve(a, b) {
    const n = b.length;
    const m = a.map((row, i) => row.concat([b[i]]));
    for (let col = 0; col < n; col++) {
      let pivot = col;
      for (let r = col + 1; r < n; r++) if (Math.abs(m[r][col]) > Math.abs(m[pivot][col])) pivot = r;
      if (Math.abs(m[pivot][col]) < 1e-12) return null;
      [m[col], m[pivot]] = [m[pivot], m[col]];
      for (let r = 0; r < n; r++) {
        if (r === col) continue;
        const f = m[r][col] / m[col][col];
        for (let k = col; k <= n; k++) m[r][k] -= f * m[col][k];
      }
    }
    return m.map((row, i) => row[n] / row[i]);
  }

  // The homography [h0..h8] (row-major, h8 = 1) taking the four points src to dst.
  function homography(src, dst) {
    const a = [], b = [];
    for (let i = 0; i < 4; i++) {
      const [x, y] = src[i], [u, v] = dst[i];
      a.push([x, y, 1, 0, 0, 0, -u * x, -u * y]); b.push(u);
      a.push([0, 0, 0, x, y, 1, -v * x, -v * y]); b.push(v);
    }
    const h = solve(a, b);
    return h ? h.concat([1]) : null;
  }

  // CSS matrix3d (column-major) of a homography acting on (x, y, 0, 1).
  function matrix3d(h) {
    const m = [h[0], h[3], 0, h[6], h[1], h[4], 0, h[7], 0, 0, 1, 0, h[2], h[5], 0, h[8]];
    return 'matrix3d(' + m.map(v => +v.toFixed(10)).join(',') + ')';
  }

  function apply(x, y, h) {
    const w = h[6] * x + h[7] * y + h[8];
    return [(h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w];
  }

  function defaultCorners() {
    const W = innerWidth, H = innerHeight, b = box;
    return [[b.left / W, b.top / H], [(b.left + b.width) / W, b.top / H],
            [(b.left + b.width) / W, (b.top + b.height) / H], [b.left / W, (b.top + b.height) / H]];
  }

  // Sizes and places the grid, then draws it through the corner pin.
  function layout() {
    if (!stage) return;
    if (!enabled) {
      stage.style.transform = '';
      stage.style.removeProperty('--cell');
      stage.style.left = stage.style.top = '';
      showHandles(false);
      touchLayout();
      listeners.forEach(f => f());
      return;
    }
    const W = innerWidth, H = innerHeight;
    const cell = Math.max(4, Math.floor(Math.min((W - 2 * MARGIN) / grid.cols, (H - BAR - 2 * MARGIN) / grid.rows)));
    stage.style.setProperty('--cell', cell + 'px');
    const width = cell * grid.cols, height = cell * grid.rows;
    const left = Math.round((W - width) / 2), top = Math.round(BAR + MARGIN + (H - BAR - 2 * MARGIN - height) / 2);
    stage.style.left = left + 'px';
    stage.style.top = top + 'px';
    box = { left, top, width, height };
    if (corners) {
      const src = [[0, 0], [width, 0], [width, height], [0, height]];
      const dst = corners.map(([fx, fy]) => [fx * W - left, fy * H - top]);
      const h = homography(src, dst);
      stage.style.transform = h ? matrix3d(h) : '';
    } else {
      stage.style.transform = '';
    }
    placeHandles();
    touchLayout();
    listeners.forEach(f => f());
  }

  function placeHandles() {
    const points = (corners || defaultCorners()).map(([fx, fy]) => [fx * innerWidth, fy * innerHeight]);
    handles.forEach((el, i) => {
      el.style.left = points[i][0] + 'px';
      el.style.top = points[i][1] + 'px';
    });
    showHandles(enabled && pinning);
  }

  function showHandles(on) {
    handles.forEach(el => { el.hidden = !on; });
    if (panel) panel.hidden = !on;
    document.body.classList.toggle('pinning', !!on);
  }

  function makeHandles() {
    const names = ['top left', 'top right', 'bottom right', 'bottom left'];
    handles = names.map((name, i) => {
      const el = document.createElement('div');
      el.className = 'pin-handle';
      el.title = 'Drag the grid\'s ' + name + ' corner to where it must be';
      el.dataset.corner = String(i);
      el.hidden = true;
      el.addEventListener('pointerdown', ev => {
        ev.preventDefault();
        el.setPointerCapture(ev.pointerId);
        if (!corners) corners = defaultCorners();
        const move = e => {
          corners[i] = [e.clientX / innerWidth, e.clientY / innerHeight];
          layout();
        };
        const up = () => {
          el.removeEventListener('pointermove', move);
          el.removeEventListener('pointerup', up);
          el.removeEventListener('pointercancel', up);
          save();
        };
        el.addEventListener('pointermove', move);
        el.addEventListener('pointerup', up);
        el.addEventListener('pointercancel', up);
      });
      document.body.appendChild(el);
      return el;
    });
  }

  function makePanel() {
    panel = document.createElement('div');
    panel.className = 'pin-panel';
    panel.hidden = true;
    panel.innerHTML = 'Drag the round handles to the corners wanted on the table. ' +
      '<button type="button" data-pin="reset">Reset</button> <button type="button" data-pin="done">Done</button>' +
      ' <button type="button" data-pin="camera" title="Project the pattern for the camera over the table (key K)">Calibrate camera</button>';
    panel.querySelector('[data-pin=reset]').addEventListener('click', () => Projector.resetPin());
    panel.querySelector('[data-pin=camera]').addEventListener('click', () => Projector.calibrateCamera());
    panel.querySelector('[data-pin=done]').addEventListener('click', () => Projector.togglePin());
    document.body.appendChild(panel);
  }

  const Projector = {
    attach(element, size) {
      stage = element;
      stage.classList.add('projector-stage');
      if (size) grid = { cols: size.cols, rows: size.rows };
      corners = load();
      makeHandles();
      makePanel();
      addEventListener('resize', layout);
      document.addEventListener('fullscreenchange', layout);
      layout();
    },
    setGrid(cols, rows) {
      grid = { cols: Math.max(1, cols), rows: Math.max(1, rows) };
      layout();
    },
    get enabled() { return enabled; },
    get pinning() { return pinning; },
    enable(on = true) {
      enabled = !!on;
      document.body.classList.toggle('projector', enabled);
      if (enabled && document.fullscreenEnabled && !document.fullscreenElement) {
        // Needs a user gesture; a page opened with ?projector=1 stays in the window.
        document.documentElement.requestFullscreen().catch(() => {});
      } else if (!enabled && document.fullscreenElement) {
        document.exitFullscreen().catch(() => {});
      }
      if (!enabled) pinning = false;
      layout();
    },
    toggle() { Projector.enable(!enabled); },
    togglePin() {
      if (!enabled) Projector.enable(true);
      pinning = !pinning;
      layout();
    },
    resetPin() {
      corners = null;
      save();
      layout();
    },
    // Sets the corners (fractions of the window, TL, TR, BR, BL) and keeps them.
    setCorners(points) {
      corners = points ? points.map(p => [p[0], p[1]]) : null;
      save();
      layout();
    },
    corners() { return corners ? corners.map(p => p.slice()) : null; },
    // Where a point of the untransformed grid (px from its top left) is drawn in the window.
    toScreen(x, y) {
      if (!box) return [x, y];
      if (!enabled || !corners) return [box.left + x, box.top + y];
      const src = [[0, 0], [box.width, 0], [box.width, box.height], [0, box.height]];
      const dst = corners.map(([fx, fy]) => [fx * innerWidth, fy * innerHeight]);
      return apply(x, y, homography(src, dst));
    },
    onLayout(f) { listeners.push(f); },
    storageKey,
    homography,
    matrix3d,
  };

  // ---- camera taps (the server side is web/games/touch.rs) ----

  const SQUARES_LONG_SIDE = 11;   // as touch/pattern.rs
  const MARKER_RADIUS = 0.3;

  function screenName() {
    const name = new URLSearchParams(location.search).get('screen');
    return name && /^[A-Za-z0-9_-]{1,64}$/.test(name) ? name : 'table';
  }

  function touchUrl(rest) {
    return 'touch/' + encodeURIComponent(touch.screen) + rest;
  }

  // The pattern of touch/pattern.rs for the stage's grid: a checker in a white ring, with a
  // black marker in the middle of the ring's top side.
  function patternSize(cols, rows) {
    const long = Math.max(cols, rows), short = Math.min(cols, rows);
    const shortSquares = Math.max(6, Math.round(SQUARES_LONG_SIDE * short / long));
    return cols >= rows ? { across: SQUARES_LONG_SIDE, down: shortSquares } : { across: shortSquares, down: SQUARES_LONG_SIDE };
  }

  function drawPattern(canvas, width, height) {
    const { across, down } = patternSize(grid.cols, grid.rows);
    canvas.width = width; canvas.height = height;
    const g = canvas.getContext('2d');
    g.fillStyle = '#fff';
    g.fillRect(0, 0, width, height);
    g.fillStyle = '#000';
    const sw = width / across, sh = height / down;
    for (let j = 1; j < down - 1; j++) for (let i = 1; i < across - 1; i++) {
      // The checker's top left square (1, 1) is black.
      if ((i + j) % 2 === 0) g.fillRect(Math.round(i * sw), Math.round(j * sh), Math.round((i + 1) * sw) - Math.round(i * sw), Math.round((j + 1) * sh) - Math.round(j * sh));
    }
    g.beginPath();
    g.ellipse(width / 2, sh / 2, MARKER_RADIUS * sw, MARKER_RADIUS * sh, 0, 0, 2 * Math.PI);
    g.fill();
  }

  function touchElements() {
    if (touch.ring) return;
    touch.status = document.createElement('div');
    touch.status.className = 'touch-status';
    touch.status.hidden = true;
    document.body.appendChild(touch.status);
    touch.ring = document.createElement('div');
    touch.ring.className = 'touch-ring';
    touch.ring.hidden = true;
    touch.tip = document.createElement('div');
    touch.tip.className = 'touch-tip';
    touch.tip.hidden = true;
    document.body.appendChild(touch.ring);
    document.body.appendChild(touch.tip);
  }

  function showStatus(text, kind) {
    if (!touch || !touch.status) return;
    touch.status.textContent = text;
    touch.status.dataset.kind = kind || '';
    touch.status.hidden = !enabled || !text;
  }

  function describeStatus(s) {
    touch.camera = s.camera;
    touch.calibrated = s.calibrated;
    if (!s.camera.bound) return showStatus('', '');
    if (!s.camera.on) return showStatus('camera input off: ' + s.camera.message, 'off');
    if (!s.calibrated) return showStatus('camera on, not calibrated for this game: press K', 'warn');
    if (s.moved) return showStatus('the camera or the projector seems to have moved: calibrate again (K)', 'warn');
    showStatus('camera input on', 'on');
  }

  function showPointer(p) {
    if (!touch.ring) return;
    const cellPx = box ? box.width / grid.cols : 0;
    if (!enabled || !p.cell || !box) {
      touch.ring.hidden = true;
    } else {
      const [x, y] = Projector.toScreen((p.cell[0] + 0.5) * cellPx, (p.cell[1] + 0.5) * cellPx);
      touch.ring.hidden = false;
      touch.ring.style.left = x + 'px';
      touch.ring.style.top = y + 'px';
      touch.ring.style.setProperty('--progress', String(p.progress));
      touch.ring.style.setProperty('--size', Math.max(24, cellPx * 0.9) + 'px');
      touch.ring.classList.toggle('resting', !!p.resting);
      touch.ring.classList.toggle('full', p.progress >= 1);
    }
    if (!enabled || !p.at || !box) {
      touch.tip.hidden = true;
    } else {
      const [x, y] = Projector.toScreen(p.at[0] * cellPx, p.at[1] * cellPx);
      touch.tip.hidden = false;
      touch.tip.style.left = x + 'px';
      touch.tip.style.top = y + 'px';
    }
    touch.pointer = p;
  }

  function post(url, body) {
    return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
      .then(r => r.json().then(j => { if (!r.ok) throw new Error(j.error || r.statusText); return j; }));
  }

  let gridTimer = null;
  // Tells the server the game and grid (after layout settles), and follows the screen's events.
  function touchLayout() {
    if (!touch) return;
    if (!enabled) {
      if (touch.source) { touch.source.close(); touch.source = null; }
      showPointer({});
      showStatus('', '');
      return;
    }
    touchElements();
    clearTimeout(gridTimer);
    gridTimer = setTimeout(() => {
      post(touchUrl('/grid'), { game: touch.game, cols: grid.cols, rows: grid.rows }).catch(() => {});
    }, 100);
    if (!touch.source) {
      touch.source = new EventSource(touchUrl('/events'));
      touch.source.addEventListener('status', ev => {
        const s = JSON.parse(ev.data);
        if (!s.game || s.game === touch.game) describeStatus(s);
      });
      touch.source.addEventListener('pointer', ev => {
        const e = JSON.parse(ev.data);
        if (e.game === touch.game && !touch.calibrating) showPointer(e.pointer);
      });
      touch.source.addEventListener('tap', ev => {
        const e = JSON.parse(ev.data);
        if (e.game !== touch.game || touch.calibrating) return;
        touch.taps.push(e.tap);
        try { touch.onTap(e.tap.cell[0], e.tap.cell[1]); } catch (err) { console.error(err); }
      });
    }
    if (touch.pattern && box) drawPattern(touch.pattern, box.width, box.height);
  }

  Object.assign(Projector, {
    // Camera taps for this page: `game` names it on the server, onTap(col, row) acts as a click.
    touch(options) {
      touch = { game: options.game, onTap: options.onTap, screen: screenName(), source: null, taps: [], pointer: {} };
      document.addEventListener('keydown', ev => {
        if (!enabled || ev.target.closest && ev.target.closest('input, textarea, select')) return;
        if (ev.key === 'k' || ev.key === 'K') { ev.preventDefault(); Projector.calibrateCamera(); }
      });
      layout();
    },
    // Projects the pattern until the camera has found it (or said why not).
    async calibrateCamera() {
      if (!touch) return;
      if (!enabled) Projector.enable(true);
      if (touch.calibrating) return;
      touch.calibrating = true;
      showPointer({});
      const canvas = document.createElement('canvas');
      canvas.className = 'touch-pattern';
      touch.pattern = canvas;
      drawPattern(canvas, box.width, box.height);
      stage.appendChild(canvas);
      showStatus('calibrating the camera: keep hands off the table', 'warn');
      let result;
      try {
        // Two frames for the projector to show it.
        await new Promise(r => setTimeout(r, 300));
        const fit = await post(touchUrl('/calibrate'), { game: touch.game, cols: grid.cols, rows: grid.rows });
        result = { ok: true, fit };
        showStatus('camera calibrated (' + fit.rms_px.toFixed(2) + ' px)', 'on');
      } catch (e) {
        result = { ok: false, error: e.message };
        showStatus('camera calibration failed: ' + e.message, 'off');
      } finally {
        canvas.remove();
        touch.pattern = null;
        touch.calibrating = false;
      }
      touch.lastCalibration = result;
      return result;
    },
    // For tests and the curious: the taps received, the last pointer, the camera's state.
    touchState() {
      return touch ? { screen: touch.screen, game: touch.game, taps: touch.taps.slice(), pointer: touch.pointer, camera: touch.camera || null, calibrated: !!touch.calibrated, lastCalibration: touch.lastCalibration || null } : null;
    },
  });
  window.Projector = Projector;
})();
