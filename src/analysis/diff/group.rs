//! What one row of a diff groups: name, HTA short name, category or stream.

/// What one row groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupKey {
    /// The event name (`ProfilerStep#N` as `ProfilerStep*`).
    #[default]
    Name,
    /// HTA's short name: arguments, template parameters and return type stripped.
    Short,
    /// The raw category string.
    Category,
    /// The stream or thread (`process / track` display names).
    Stream,
}

impl GroupKey {
    /// Every grouping, in the order the view cycles through them.
    pub const ALL: [GroupKey; 4] = [
        GroupKey::Name,
        GroupKey::Short,
        GroupKey::Category,
        GroupKey::Stream,
    ];

    /// Command-line / display name.
    pub fn name(self) -> &'static str {
        match self {
            GroupKey::Name => "name",
            GroupKey::Short => "short",
            GroupKey::Category => "category",
            GroupKey::Stream => "stream",
        }
    }
}
