//! Driving the game pages in headless Chromium (the `headless_chrome` crate) for the page tests:
//! find the browser, launch it, evaluate JavaScript and wait for the page to show something.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use headless_chrome::protocol::cdp::Input::{DispatchMouseEvent, DispatchMouseEventTypeOption, MouseButton};
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

/// The system's Chromium, if installed (the tests skip with a note otherwise).
pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].into_iter().map(PathBuf::from).find(|p| p.exists())
}

/// Headless Chromium with one tab, 1280x900.
pub fn launch(binary: PathBuf) -> (Browser, Arc<Tab>) {
    let options = LaunchOptions::default_builder()
        .path(Some(binary))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1280, 900)))
        .idle_browser_timeout(Duration::from_secs(300))
        .build()
        .unwrap();
    let browser = Browser::new(options).expect("chromium starts");
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    (browser, tab)
}

/// The value of a JavaScript expression, through JSON.
pub fn eval(tab: &Tab, expression: &str) -> Value {
    let result = tab.evaluate(&format!("JSON.stringify({expression})"), false).unwrap_or_else(|e| panic!("{expression}: {e}"));
    match result.value {
        Some(Value::String(text)) => serde_json::from_str(&text).unwrap(),
        _ => Value::Null,
    }
}

/// Runs JavaScript statements.
pub fn run(tab: &Tab, statements: &str) {
    tab.evaluate(statements, false).unwrap_or_else(|e| panic!("{statements}: {e}"));
}

/// Waits (at most 30 s) until `expression` satisfies `check`, and returns its value.
pub fn wait_for(tab: &Tab, what: &str, expression: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let value = eval(tab, expression);
        if check(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "the page never showed {what}: last {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A page in projector mode whose screen has a camera: waits for the camera, asks the page to
/// calibrate it from the projected pattern (as its button does), and returns the calibration's
/// answer once it is a success.
pub fn calibrate_projector_camera(tab: &Tab) -> Value {
    wait_for(tab, "the camera on", "Projector.touchState() && Projector.touchState().camera", |v| v["on"] == true);
    run(tab, "Projector.calibrateCamera()");
    let calibration = wait_for(tab, "the calibration's answer", "Projector.touchState().lastCalibration", |v| !v.is_null());
    assert_eq!(calibration["ok"], true, "calibration: {calibration}");
    calibration
}

/// One mouse event at (x, y): `button` is the one pressed or released, `buttons` those held
/// (1 left, 2 right).
pub fn mouse_event(tab: &Tab, kind: DispatchMouseEventTypeOption, (x, y): (f64, f64), button: MouseButton, buttons: u32) {
    tab.call_method(DispatchMouseEvent {
        Type: kind,
        x,
        y,
        modifiers: None,
        timestamp: None,
        button: Some(button),
        buttons: Some(buttons),
        click_count: Some(1),
        force: None,
        tangential_pressure: None,
        tilt_x: None,
        tilt_y: None,
        twist: None,
        delta_x: None,
        delta_y: None,
        pointer_Type: None,
    })
    .unwrap();
}
