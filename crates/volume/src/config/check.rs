//! Turning the raw TOML into a checked [`VolumeSpec`], every problem tied to the
//! line of the value at fault.

use super::*;

pub(super) struct Checker<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Checker<'_> {
    fn error<T>(
        &self,
        span: std::ops::Range<usize>,
        problem: impl Into<String>,
    ) -> Result<T, ConfigError> {
        Err(ConfigError {
            file: self.file.to_string(),
            line: line_of(self.text, span.start),
            problem: problem.into(),
        })
    }

    fn choice<T: Copy>(
        &self,
        value: &Spanned<String>,
        key: &str,
        options: &[(&str, T)],
    ) -> Result<T, ConfigError> {
        match options
            .iter()
            .find(|(name, _)| *name == value.get_ref().as_str())
        {
            Some(&(_, choice)) => Ok(choice),
            None => {
                let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
                self.error(
                    value.span(),
                    format!(
                        "{key} {:?} is not one of {}",
                        value.get_ref(),
                        names.join(", ")
                    ),
                )
            }
        }
    }

    fn count(
        &self,
        value: &Spanned<i64>,
        key: &str,
        range: std::ops::RangeInclusive<i64>,
    ) -> Result<u32, ConfigError> {
        let n = *value.get_ref();
        if !range.contains(&n) {
            return self.error(
                value.span(),
                format!(
                    "{key} = {n} is out of range ({}..={})",
                    range.start(),
                    range.end()
                ),
            );
        }
        Ok(n as u32)
    }

    fn size(&self, value: &Spanned<toml::Value>, key: &str) -> Result<Sectors, ConfigError> {
        parse_size(value.get_ref())
            .or_else(|problem| self.error(value.span(), format!("{key}: {problem}")))
    }

    pub(super) fn check(&self, raw: RawSpec) -> Result<VolumeSpec, ConfigError> {
        let level = self.choice(
            &raw.level,
            "level",
            &[
                ("single", Level::Single),
                ("raid0", Level::Raid0),
                ("raid1", Level::Raid1),
                ("raid10", Level::Raid10),
                ("raid5", Level::Raid5),
                ("raid5-track-aligned", Level::Raid5TrackAligned),
            ],
        )?;
        let members = self.members(&raw, level)?;
        let chunk = self.chunk(&raw, level)?;
        let copies = match &raw.copies {
            Some(copies) if level != Level::Raid10 => {
                return self.error(copies.span(), "copies applies to raid10 only")
            }
            Some(copies) => self.count(copies, "copies", 2..=members.len() as i64)?,
            None => 2.min(members.len() as u32),
        };
        let track_units = match &raw.track_units {
            Some(units) if level != Level::Raid5TrackAligned => {
                return self.error(
                    units.span(),
                    "track_units applies to raid5-track-aligned only",
                )
            }
            Some(units) => self.choice(
                units,
                "track_units",
                &[
                    ("whole-track", TrackUnits::WholeTrack),
                    ("smallest-track", TrackUnits::SmallestTrack),
                    ("largest-track", TrackUnits::LargestTrack),
                ],
            )?,
            None => TrackUnits::WholeTrack,
        };
        // An option the level has no use for is an error, not silently dropped (as
        // chunk, copies and track_units above).
        let mirrored = matches!(level, Level::Raid1 | Level::Raid10);
        let parity = matches!(level, Level::Raid5 | Level::Raid5TrackAligned);
        if let (Some(balance), false) = (&raw.read_balance, mirrored) {
            return self.error(
                balance.span(),
                "read_balance applies to raid1 and raid10 only",
            );
        }
        let parity_only = [
            (
                "fill_in_parity",
                raw.fill_in_parity.as_ref().map(|v| v.span()),
            ),
            ("stripe_cache", raw.stripe_cache.as_ref().map(|v| v.span())),
            (
                "delayed_stripes",
                raw.delayed_stripes.as_ref().map(|v| v.span()),
            ),
        ];
        if let (Some((key, Some(span))), false) =
            (parity_only.iter().find(|(_, span)| span.is_some()), parity)
        {
            return self.error(
                span.clone(),
                format!("{key} applies to raid5 and raid5-track-aligned only"),
            );
        }
        let read_balance = match &raw.read_balance {
            Some(balance) => self.choice(
                balance,
                "read_balance",
                &[
                    ("shortest-queue", ReadBalance::ShortestQueue),
                    ("nearest-head", ReadBalance::NearestHead),
                ],
            )?,
            None => ReadBalance::default(),
        };
        let stripe_cache = match &raw.stripe_cache {
            Some(stripes) => self.count(stripes, "stripe_cache", 0..=1 << 20)?,
            None => super::DEFAULT_STRIPE_CACHE,
        };
        Ok(VolumeSpec {
            level,
            chunk,
            members,
            copies,
            track_units,
            read_balance,
            fill_in_parity: raw
                .fill_in_parity
                .map_or(level.fill_in_parity_by_default(), |v| *v.get_ref()),
            stripe_cache,
            delayed_stripes: raw.delayed_stripes.as_ref().is_none_or(|v| *v.get_ref()),
            buffer: raw.buffer.as_ref().map(|b| self.buffer(b)).transpose()?,
            plug: raw.plug.as_ref().map(|p| self.plug(p)).transpose()?,
            host: match &raw.host {
                Some(host) => self.host(host)?,
                None => HostCost::windows2000_device_io(),
            },
            origin: Some(Origin {
                file: self.file.to_string(),
                member_lines: raw
                    .members
                    .get_ref()
                    .iter()
                    .map(|m| line_of(self.text, m.span().start))
                    .collect(),
            }),
        })
    }

    fn members(&self, raw: &RawSpec, level: Level) -> Result<Vec<String>, ConfigError> {
        let members: Vec<String> = raw
            .members
            .get_ref()
            .iter()
            .map(|m| m.get_ref().clone())
            .collect();
        if members.len() < level.minimum_members() {
            return self.error(
                raw.members.span(),
                format!(
                    "{} needs at least {} members, the file lists {}",
                    level.name(),
                    level.minimum_members(),
                    members.len()
                ),
            );
        }
        if level == Level::Single && members.len() != 1 {
            return self.error(
                raw.members.span(),
                format!("single takes one member, the file lists {}", members.len()),
            );
        }
        if members.len() > 64 {
            return self.error(
                raw.members.span(),
                format!("at most 64 members, the file lists {}", members.len()),
            );
        }
        if let Some(empty) = raw
            .members
            .get_ref()
            .iter()
            .find(|m| m.get_ref().trim().is_empty())
        {
            return self.error(empty.span(), "a member needs a drive name or path");
        }
        Ok(members)
    }

    fn chunk(&self, raw: &RawSpec, level: Level) -> Result<Option<Sectors>, ConfigError> {
        match &raw.chunk {
            Some(chunk) if !level.uses_chunk() => self.error(
                chunk.span(),
                format!(
                    "chunk does not apply to {} (only raid0, raid10, raid5)",
                    level.name()
                ),
            ),
            Some(chunk) => Ok(Some(self.size(chunk, "chunk")?)),
            None if level.uses_chunk() => self.error(
                raw.level.span(),
                format!("{} needs a chunk (e.g. chunk = \"64KiB\")", level.name()),
            ),
            None => Ok(None),
        }
    }

    fn buffer(&self, raw: &Spanned<RawBuffer>) -> Result<BufferSpec, ConfigError> {
        let buffer = raw.get_ref();
        let block = match &buffer.block {
            Some(block) => self.size(block, "buffer.block")?,
            None => Sectors(256),
        };
        let blocks = match &buffer.blocks {
            Some(blocks) => self.count(blocks, "buffer.blocks", 1..=1 << 24)?,
            None => 64,
        };
        let policy = match &buffer.policy {
            Some(policy) => self.choice(
                policy,
                "buffer.policy",
                &[
                    ("write-back", WritePolicy::WriteBack),
                    ("write-through", WritePolicy::WriteThrough),
                ],
            )?,
            None => WritePolicy::WriteBack,
        };
        if block.0.saturating_mul(u64::from(blocks)) > (1 << 31) {
            return self.error(
                raw.span(),
                "the buffer is larger than 1 TiB (blocks x block)",
            );
        }
        Ok(BufferSpec {
            block,
            blocks,
            policy,
        })
    }

    fn plug(&self, raw: &Spanned<RawPlug>) -> Result<PlugPolicy, ConfigError> {
        let plug = raw.get_ref();
        let mut policy = PlugPolicy::linux26();
        if let Some(delay) = &plug.delay_ms {
            policy.delay = micros(delay.get_ref() * 1e3)
                .or_else(|p| self.error(delay.span(), format!("plug.delay_ms: {p}")))?;
        }
        if let Some(threshold) = &plug.threshold {
            policy.threshold = self.count(threshold, "plug.threshold", 1..=1 << 16)?;
        }
        if let Some(aware) = &plug.track_aware {
            policy.track_aware = *aware.get_ref();
        }
        if let Some(max) = &plug.max_request {
            policy.max_request = self.size(max, "plug.max_request")?;
        }
        Ok(policy)
    }

    fn host(&self, raw: &Spanned<RawHost>) -> Result<HostCost, ConfigError> {
        let host = raw.get_ref();
        let fixed = micros(*host.per_io_us.get_ref())
            .or_else(|p| self.error(host.per_io_us.span(), format!("host.per_io_us: {p}")))?;
        let per_kib = micros(*host.per_kib_us.get_ref())
            .or_else(|p| self.error(host.per_kib_us.span(), format!("host.per_kib_us: {p}")))?;
        Ok(HostCost { fixed, per_kib })
    }
}
