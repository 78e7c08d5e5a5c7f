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
      '<button type="button" data-pin="reset">Reset</button> <button type="button" data-pin="done">Done</button>';
    panel.querySelector('[data-pin=reset]').addEventListener('click', () => Projector.resetPin());
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
  window.Projector = Projector;
})();
