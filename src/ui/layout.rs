//! Screen regions of the timeline view, a pure function of the terminal size (shared by `update`
//! for paging/zoom and by `draw`).

use ratatui::layout::Rect;

/// Regions of the timeline screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    /// Title line.
    pub header: Rect,
    /// Time ruler (over the lanes).
    pub ruler: Rect,
    /// Left gutter beside the ruler (window width).
    pub corner: Rect,
    /// Track names beside the lanes.
    pub gutter: Rect,
    /// The flame lanes.
    pub lanes: Rect,
    /// Separator line above the details.
    pub sep: Rect,
    /// Details of the selection (1 line on small terminals).
    pub details: Rect,
    /// Status / key hint line.
    pub status: Rect,
}

/// Gutter width for a terminal `w` columns wide.
pub fn gutter_width(w: u16) -> u16 {
    let g = if w >= 140 {
        28
    } else if w >= 100 {
        22
    } else {
        16
    };
    g.min(w / 3)
}

/// Details panel height for a terminal `h` rows high; `busy` when there is a selection or a
/// mark to describe (small terminals then give the panel 3 lines instead of 1).
pub fn details_height(h: u16, busy: bool) -> u16 {
    if h >= 36 {
        7
    } else if h >= 28 {
        4
    } else if busy && h >= 16 {
        3
    } else {
        1
    }
}

/// Splits `area` into the timeline regions (details panel sized for no selection).
pub fn areas(area: Rect) -> Areas {
    areas_with(area, false)
}

/// Splits `area` into the timeline regions; `busy`: something is selected or marked.
pub fn areas_with(area: Rect, busy: bool) -> Areas {
    let (x, y, w, h) = (area.x, area.y, area.width, area.height);
    let g = gutter_width(w);
    let dh = details_height(h, busy).min(h.saturating_sub(4));
    let fixed = 2 + 1 + dh + 1;
    let body_h = h.saturating_sub(fixed);
    let row = |yy: u16, hh: u16| Rect::new(x, y + yy.min(h), w, hh.min(h.saturating_sub(yy)));
    let body_y = 2u16.min(h);
    Areas {
        header: row(0, 1),
        corner: Rect::new(x, y + 1.min(h), g, 1.min(h.saturating_sub(1))),
        ruler: Rect::new(x + g, y + 1.min(h), w - g, 1.min(h.saturating_sub(1))),
        gutter: Rect::new(x, y + body_y, g, body_h),
        lanes: Rect::new(x + g, y + body_y, w - g, body_h),
        sep: row(body_y + body_h, 1),
        details: row(body_y + body_h + 1, dh),
        status: row(h.saturating_sub(1), 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_fit_and_do_not_overlap() {
        for (w, h) in [(80, 24), (160, 48), (20, 5), (0, 0), (300, 100)] {
            let a = areas(Rect::new(0, 0, w, h));
            let all = [
                a.header, a.ruler, a.gutter, a.lanes, a.sep, a.details, a.status,
            ];
            for r in all {
                assert!(r.right() <= w && r.bottom() <= h, "{w}x{h}: {r:?}");
            }
            if h >= 10 {
                assert_eq!(a.lanes.bottom(), a.sep.y);
                assert_eq!(a.details.bottom(), a.status.y);
            }
        }
        assert_eq!(areas(Rect::new(0, 0, 80, 24)).details.height, 1);
        let sel = areas_with(Rect::new(0, 0, 80, 24), true);
        assert_eq!(sel.details.height, 3);
        assert_eq!(sel.lanes.bottom(), sel.sep.y);
        assert_eq!(sel.details.bottom(), sel.status.y);
        for h in 0..40 {
            let a = areas_with(Rect::new(0, 0, 80, h), true);
            for r in [a.header, a.ruler, a.lanes, a.sep, a.details, a.status] {
                assert!(r.bottom() <= h, "{h}: {r:?}");
            }
        }
    }
}
