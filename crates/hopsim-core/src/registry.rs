//! The registries of flow-control schemes (`fc`) and congestion controls (`cc`): what every entry
//! declares about itself, and the macro that turns each one list (`fc/mod.rs`, `cc/mod.rs`) into
//! the scenario's tagged table, the engine's static dispatch and every list of allowed values.
//!
//! Why registries: before them, adding a scheme meant editing the config enum, the validation,
//! the module enum and its dispatch, the NIC builder, the published defaults, the memory estimate
//! and the Python front's lists, and two of those edits failed silently when missed (a table
//! written into the run folder but never read; a NIC that stamped nothing). Now a scheme is one
//! file that declares itself ([`Declared`] and `fc::Scheme` or `cc::Algorithm`) plus one line in
//! its list; everything that used to name schemes asks the registry instead.
//!
//! Why a declarative macro and not `dyn`: the hooks run on every packet, and an enum of concrete
//! types lets the compiler inline a hook that is a field read (PFC's `next_timer`). The macro
//! writes that enum and its `match`es from the list, so the hot path is what it was when the enum
//! was written by hand.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The unit a scenario gives a field in ("100KB", "5us", "100Gbps"), for a front that builds an
/// entry's table from this declaration alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Bytes,
    Time,
    Rate,
}

/// What every registered scheme or algorithm declares, implemented by its configuration type in
/// its own file. One without parameters implements it on an empty struct (`pub struct PfcScheme
/// {}`), so that a table giving it a field is an error.
pub trait Declared: Clone + Default + Serialize + DeserializeOwned {
    /// The name a scenario selects it by (`flow_control.scheme = NAME`), which is also the name
    /// of its parameter table (`[flow_control.NAME]`).
    const NAME: &'static str;
    /// The paper and section it implements, in one line.
    const ABOUT: &'static str;
    /// Counters its module reports in the run summary, by name.
    const COUNTERS: &'static [&'static str] = &[];
    /// Fields a scenario gives with a unit.
    fn units() -> &'static [(&'static str, Unit)] {
        &[]
    }
}

/// One entry as the registry publishes it (`hopsim_core::defaults::registry_json`).
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    pub name: &'static str,
    pub about: &'static str,
    /// Its default parameters, as a scenario's table writes them (core units).
    pub defaults: serde_json::Value,
    pub units: std::collections::BTreeMap<&'static str, Unit>,
    pub counters: &'static [&'static str],
}

impl Entry {
    pub fn of<D: Declared>() -> Entry {
        Entry {
            name: D::NAME,
            about: D::ABOUT,
            defaults: serde_json::to_value(D::default()).expect("defaults serialise"),
            units: D::units().iter().copied().collect(),
            counters: D::COUNTERS,
        }
    }
}

/// A scheme's configuration with its tag in front, serialised as the derived internally tagged
/// enum did (`{"scheme": "ppfc", ...fields}`), so that the published JSON is unchanged.
#[derive(Serialize)]
pub(crate) struct SchemeTagged<'a, C: Serialize> {
    pub scheme: &'static str,
    #[serde(flatten)]
    pub cfg: &'a C,
}

/// The same for a congestion control (`{"algorithm": "dcqcn", ...fields}`).
#[derive(Serialize)]
pub(crate) struct AlgorithmTagged<'a, C: Serialize> {
    pub algorithm: &'static str,
    #[serde(flatten)]
    pub cfg: &'a C,
}

/// Splits a tagged table into its tag and the rest: the error names `table.tag` and the allowed
/// values when the tag is missing or not a string.
pub(crate) fn split_tag(v: serde_json::Value, table: &str, tag: &str, allowed: &[&str]) -> Result<(String, serde_json::Value), String> {
    let serde_json::Value::Object(mut m) = v else {
        return Err(format!("{table}: expected a table with `{tag}`; allowed {tag}s: {}", allowed.join(", ")));
    };
    match m.remove(tag) {
        Some(serde_json::Value::String(s)) => Ok((s, serde_json::Value::Object(m))),
        _ => Err(format!("{table}.{tag}: missing or not a name; allowed: {}", allowed.join(", "))),
    }
}

/// The fields of one entry's table, read strictly: an unknown field is an error naming the table
/// and the fields allowed, never a silent default.
pub(crate) fn read_table<C: DeserializeOwned>(rest: serde_json::Value, table: &str, name: &str) -> Result<C, String> {
    serde_json::from_value(rest).map_err(|e| format!("{table}.{name}: {e}"))
}

/// Writes a registry from its list.
///
/// `unit { module::Variant(Descriptor) => [arms] }` are entries without parameters (the config
/// variant holds nothing; the descriptor is an empty struct in `module`); `configured {
/// module::Variant(Config) => [arms] }` hold their parameters. Each `module` is declared here
/// (`pub mod module;`). The arms are the variants of the dispatch enum the entry builds (BFC
/// builds one with PFC underneath and one without). Besides the two enums it writes `dispatch!`
/// (a hook called on whichever arm) and `with_entry!` (a body run with the entry's declaration),
/// for the module's own `impl`s, and the config's names, defaults, strict reading and serde.
macro_rules! registry {
    (
        config $Config:ident, any $Any:ident, tag $tag:ident, table $table:literal, tagged $Tagged:ident, default $DV:ident;
        $(custom $Custom:path;)?
        $(dynamic $DynV:ident($DynT:ty), lookup $lookup:path, entries $entries:path, defaults $defaults:path;)?
        unit { $($um:ident :: $UV:ident($UD:ident) => [$($UA:ident($UT:ty)),*],)* }
        configured { $($cm:ident :: $CV:ident($CC:ident) => [$($CA:ident($CT:ty)),*],)* }
    ) => {
        $(pub mod $um;)*
        $(pub mod $cm;)*

        #[doc = concat!("A scenario's `", $table, "` table, tagged by `", stringify!($tag), "`: which entry runs, with its parameters.")]
        #[derive(Clone, Debug, PartialEq)]
        pub enum $Config {
            $($UV,)*
            $($CV($cm::$CC),)*
            $(
            /// An entry registered at run time (`fc::plugin`).
            $DynV($DynT),
            )?
        }

        /// Static dispatch over the entries' modules.
        pub enum $Any {
            $($($UA($UT),)*)*
            $($($CA($CT),)*)*
            $(
            /// A module from outside the crate (a prototype, a test's scheme): dynamic dispatch,
            /// so the built-in arms above pay nothing for it.
            Custom(Box<dyn $Custom + Send>),
            )?
        }

        /// Calls a hook on whichever arm; `Custom` goes through a cold, out-of-line call, so that
        /// a hook that is a plain field read for a built-in arm stays a leaf the compiler inlines.
        macro_rules! dispatch {
            ($self:ident, $m:ident $args:tt) => {
                match $self {
                    $($($Any::$UA(x) => x.$m $args,)*)*
                    $($($Any::$CA(x) => x.$m $args,)*)*
                    $(
                    $Any::Custom(x) => {
                        #[cold]
                        #[inline(never)]
                        fn custom<R>(f: impl FnOnce() -> R) -> R {
                            f()
                        }
                        // (names `$Custom`, so that this arm comes with the `custom` clause)
                        let _: Option<&dyn $Custom> = None;
                        custom(|| x.$m $args)
                    }
                    )?
                }
            };
        }

        /// Runs a body with the entry's declaration (`c`: the configuration, or the descriptor).
        macro_rules! with_entry {
            ($cfg:expr, |$c:ident| $body:expr) => {
                match $cfg {
                    $($Config::$UV => { let $c = &$um::$UD::default(); $body })*
                    $($Config::$CV(cfg) => { let $c = cfg; $body })*
                    // (the type named, so that this arm comes with the `dynamic` clause)
                    $($Config::$DynV(cfg) => { let _: Option<&$DynT> = None; let $c = cfg; $body })?
                }
            };
        }

        impl Default for $Config {
            fn default() -> $Config {
                $Config::$DV
            }
        }

        impl $Config {
            /// The names a scenario may select, in the registry's order.
            pub const NAMES: &'static [&'static str] =
                &[$(<$um::$UD as $crate::registry::Declared>::NAME,)* $(<$cm::$CC as $crate::registry::Declared>::NAME,)*];

            /// The names a scenario may select: the built-in ones, then those registered at run time.
            pub fn names() -> Vec<&'static str> {
                Self::all_defaults().iter().map(|c| c.name()).collect()
            }

            /// Every entry with its defaults, what the core publishes to the front.
            pub fn registry() -> Vec<$crate::registry::Entry> {
                #[allow(unused_mut)]
                let mut v = vec![$($crate::registry::Entry::of::<$um::$UD>(),)* $($crate::registry::Entry::of::<$cm::$CC>(),)*];
                $(v.extend($entries());)?
                v
            }

            /// Every entry at its default parameters.
            pub fn all_defaults() -> Vec<$Config> {
                #[allow(unused_mut)]
                let mut v = vec![$($Config::$UV,)* $($Config::$CV(Default::default()),)*];
                $(v.extend($defaults().into_iter().map($Config::$DynV));)?
                v
            }

            /// The entry's name.
            pub fn name(&self) -> &'static str {
                match self {
                    $($Config::$UV => <$um::$UD as $crate::registry::Declared>::NAME,)*
                    $($Config::$CV(_) => <$cm::$CC as $crate::registry::Declared>::NAME,)*
                    $($Config::$DynV(p) => p.name(),)?
                }
            }

            /// Reads the table: its tag and that entry's fields, strictly.
            pub fn from_table(v: serde_json::Value) -> Result<$Config, String> {
                let (name, rest) = $crate::registry::split_tag(v, $table, stringify!($tag), &Self::names())?;
                $(if name == <$um::$UD as $crate::registry::Declared>::NAME {
                    $crate::registry::read_table::<$um::$UD>(rest, $table, &name)?;
                    return Ok($Config::$UV);
                })*
                $(if name == <$cm::$CC as $crate::registry::Declared>::NAME {
                    return Ok($Config::$CV($crate::registry::read_table(rest, $table, &name)?));
                })*
                $(if let Some(read) = $lookup(&name, rest.clone()) {
                    return read.map($Config::$DynV);
                })?
                Err(format!(concat!($table, ".", stringify!($tag), ": unknown {} `{}`; allowed: {}"), stringify!($tag), name, Self::names().join(", ")))
            }
        }

        impl serde::Serialize for $Config {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                with_entry!(self, |c| $crate::registry::$Tagged { $tag: self.name(), cfg: c }.serialize(s))
            }
        }

        impl<'de> serde::Deserialize<'de> for $Config {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$Config, D::Error> {
                let v = serde_json::Value::deserialize(d)?;
                $Config::from_table(v).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use registry;
