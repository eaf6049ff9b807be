-- The informants of the first round; each round resets secrets, price, heat and burned_until.
INSERT INTO sources (name, description, secrets, price, base_price, heat, burned_until) VALUES
	('Deep Throat', 'Meets you in a parking garage at 2 a.m. and never the same garage twice.', 2, 300, 300, 0, 0),
	('The Roswell Morgue Clerk', 'Signed for a body in July 1947 and still has the carbon copy.', 2, 250, 250, 0, 0),
	('Area 51 Janitor', 'Mops the floors of hangar 18 and reads whatever is left on the desks.', 2, 150, 150, 0, 0),
	('The Cigarette-Smoking Man''s Tailor', 'Knows which pocket the lighter goes in, and whom it was for.', 2, 400, 400, 0, 0),
	('Majestic-12 Stenographer', 'Typed the minutes of meetings that never happened.', 2, 350, 350, 0, 0),
	('Late-Night Radio Host', 'Takes calls from truckers who saw lights over Nevada. Some of them are right.', 2, 100, 100, 0, 0),
	('Crop Circle Farmer', 'Charges admission to his field and knows what really flattened the wheat.', 2, 120, 120, 0, 0),
	('Ex-Project Blue Book Analyst', 'Explained it all away as swamp gas, under orders. Kept copies.', 2, 200, 200, 0, 0);
